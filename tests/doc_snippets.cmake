# The C++ snippets of the README and of docs/*.md, run as a user would paste them (a snippet no
# test runs is how a crash ships). At configure time every ```cpp block becomes one function of
# doc_snippets.cpp in the build tree: its #include lines go to the top, and the placeholders it
# names (q, kp, envs, ...) are defined first by tests/snippets/<page>_<k>.inc when that file
# exists (<page>: README or the docs page's name; k counts the page's C++ blocks from 1). The
# program runs each snippet from the source tree (the snippets' paths are relative to it) and
# fails, naming the snippet, on the first batchdyn::Error.
file(GLOB pages ${PROJECT_SOURCE_DIR}/docs/*.md)
list(SORT pages)
list(PREPEND pages ${PROJECT_SOURCE_DIR}/README.md)
set(includes "#include <cstdio>\n#include <exception>\n")
set(functions "")
set(calls "")
set(total 0)
foreach(page IN LISTS pages)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${page})
  get_filename_component(stem ${page} NAME_WE)
  file(READ ${page} text)
  # CMake lists split on ';' (outside brackets): hide both before matching, restore per snippet.
  string(REPLACE ";" "@SEMICOLON@" text "${text}")
  string(REPLACE "[" "@OPEN@" text "${text}")
  string(REPLACE "]" "@CLOSE@" text "${text}")
  string(REGEX MATCHALL "```cpp\n[^`]*```" blocks "${text}")
  set(n 0)
  foreach(block IN LISTS blocks)
    math(EXPR n "${n} + 1")
    math(EXPR total "${total} + 1")
    string(REGEX REPLACE "^```cpp\n" "" body "${block}")
    string(REGEX REPLACE "```$" "" body "${body}")
    string(REPLACE "@SEMICOLON@" ";" body "${body}")
    string(REPLACE "@OPEN@" "[" body "${body}")
    string(REPLACE "@CLOSE@" "]" body "${body}")
    string(REGEX MATCHALL "#include [^\n]*" block_includes "${body}")
    foreach(line IN LISTS block_includes)
      string(APPEND includes "${line}\n")
    endforeach()
    string(REGEX REPLACE "#include [^\n]*" "" body "${body}")
    set(placeholders "")
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/snippets/${stem}_${n}.inc)
      set(placeholders "#include \"snippets/${stem}_${n}.inc\"\n")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/snippets/${stem}_${n}.inc)
    endif()
    string(APPEND functions "\n// ${stem}.md, C++ snippet ${n}\nvoid snippet_${stem}_${n}() {\n${placeholders}${body}}\n")
    string(APPEND calls "  run(\"${stem}.md\", ${n}, snippet_${stem}_${n});\n")
  endforeach()
endforeach()
if(total LESS 6)
  message(FATAL_ERROR "doc_snippets.cmake: found ${total} C++ snippets in README.md and docs/, expected at least 6")
endif()
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/doc_snippets.cpp CONTENT "// Generated from README.md and docs/*.md by tests/doc_snippets.cmake: do not edit.
${includes}
${functions}
namespace {
int failures = 0;
void run(const char* page, int n, void (*snippet)()) {
  try {
    snippet();
    std::printf(\"%s C++ snippet %d: ran\\n\", page, n);
  } catch (const std::exception& error) {
    std::printf(\"%s C++ snippet %d failed: %s\\n\", page, n, error.what());
    ++failures;
  }
}
}  // namespace

int main() {
${calls}  return failures == 0 ? 0 : 1;
}
" @ONLY)
add_executable(batchdyn_doc_snippets ${CMAKE_CURRENT_BINARY_DIR}/doc_snippets.cpp)
# <batchdyn/batchdyn.hpp> as an install provides it.
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/snippet_include/batchdyn/batchdyn.hpp
     CONTENT "#include \"${PROJECT_SOURCE_DIR}/batchdyn.hpp\"\n")
target_include_directories(batchdyn_doc_snippets PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/snippet_include)
target_link_libraries(batchdyn_doc_snippets PRIVATE batchdyn batchdyn_options)
# A snippet shows a call and may leave its result unused.
target_compile_options(batchdyn_doc_snippets PRIVATE -Wno-unused-variable -Wno-unused-but-set-variable)
add_test(NAME doc_cpp_snippets COMMAND batchdyn_doc_snippets WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
