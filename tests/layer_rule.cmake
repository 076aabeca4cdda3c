# The layer rule of DESIGN.md, as a test: layout/ -> topology/ -> kernels/ -> batch/ -> cli/,
# python/, fuzz/ (the loaders' fuzz targets). A file includes only its own layer and those below it:
#   layout/   (spatial algebra, lanes, dense helpers)  nothing above it;
#   topology/ (models, loaders, plans)                 layout/;
#   kernels/  (the algorithms on lanes)                topology/, layout/;
#   batch/    (the engine)                             kernels/, topology/, layout/.
# Invoked by ctest: cmake -DSOURCE_DIR=... -P layer_rule.cmake
cmake_minimum_required(VERSION 3.22)
set(layers layout topology kernels batch cli python fuzz)
set(violations "")
set(files_checked 0)
foreach(index RANGE 0 3)
  list(GET layers ${index} layer)
  math(EXPR first_above "${index} + 1")
  set(above "")
  foreach(upper RANGE ${first_above} 6)
    list(GET layers ${upper} name)
    list(APPEND above ${name})
  endforeach()
  list(JOIN above "|" above_pattern)
  file(GLOB sources ${SOURCE_DIR}/${layer}/*.hpp ${SOURCE_DIR}/${layer}/*.cpp)
  foreach(source ${sources})
    math(EXPR files_checked "${files_checked} + 1")
    file(STRINGS ${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"(${above_pattern})/")
    foreach(line ${includes})
      file(RELATIVE_PATH relative ${SOURCE_DIR} ${source})
      string(STRIP "${line}" line)
      string(APPEND violations "\n  ${relative}: ${line} (${layer}/ may not include a layer above it)")
    endforeach()
  endforeach()
endforeach()
if(files_checked LESS 40)
  message(FATAL_ERROR "layer rule: only ${files_checked} files found under ${SOURCE_DIR}; is SOURCE_DIR right?")
endif()
if(violations)
  message(FATAL_ERROR "layer rule (DESIGN.md): includes that run up the layers:${violations}")
endif()
message(STATUS "layer rule: ${files_checked} files, no include runs up the layers")
