# The README's C++ snippets, run as a user would paste them (issue 18: a snippet no test runs
# is how a crash ships). At configure time every ```cpp block of README.md becomes one function
# of readme_snippets.cpp in the build tree: its #include lines go to the top, and the
# placeholders it names (q, kp, envs, ...) are defined first by tests/readme/cpp_snippet_<n>.inc
# when that file exists. The program runs each snippet from the source tree (the snippets' paths
# are relative to it) and fails, naming the snippet, on the first batchdyn::Error.
set(readme ${PROJECT_SOURCE_DIR}/README.md)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${readme})
file(READ ${readme} text)
# CMake lists split on ';' (outside brackets): hide both before matching, restore per snippet.
string(REPLACE ";" "@SEMICOLON@" text "${text}")
string(REPLACE "[" "@OPEN@" text "${text}")
string(REPLACE "]" "@CLOSE@" text "${text}")
string(REGEX MATCHALL "```cpp\n[^`]*```" blocks "${text}")
set(includes "#include <cstdio>\n#include <exception>\n")
set(functions "")
set(calls "")
set(n 0)
foreach(block IN LISTS blocks)
  math(EXPR n "${n} + 1")
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
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/readme/cpp_snippet_${n}.inc)
    set(placeholders "#include \"readme/cpp_snippet_${n}.inc\"\n")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/readme/cpp_snippet_${n}.inc)
  endif()
  string(APPEND functions "\n// README.md, C++ snippet ${n}\nvoid readme_cpp_snippet_${n}() {\n${placeholders}${body}}\n")
  string(APPEND calls "  run(${n}, readme_cpp_snippet_${n});\n")
endforeach()
if(n LESS 4)
  message(FATAL_ERROR "readme_snippets.cmake: found ${n} C++ snippets in README.md, expected at least 4")
endif()
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/readme_snippets.cpp CONTENT "// Generated from README.md by tests/readme_snippets.cmake: do not edit.
${includes}
${functions}
namespace {
int failures = 0;
void run(int n, void (*snippet)()) {
  try {
    snippet();
    std::printf(\"README C++ snippet %d: ran\\n\", n);
  } catch (const std::exception& error) {
    std::printf(\"README C++ snippet %d failed: %s\\n\", n, error.what());
    ++failures;
  }
}
}  // namespace

int main() {
${calls}  return failures == 0 ? 0 : 1;
}
" @ONLY)
add_executable(batchdyn_readme_snippets ${CMAKE_CURRENT_BINARY_DIR}/readme_snippets.cpp)
# <batchdyn/batchdyn.hpp> as an install provides it.
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/readme_include/batchdyn/batchdyn.hpp
     CONTENT "#include \"${PROJECT_SOURCE_DIR}/batchdyn.hpp\"\n")
target_include_directories(batchdyn_readme_snippets PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/readme_include)
target_link_libraries(batchdyn_readme_snippets PRIVATE batchdyn batchdyn_options)
# A snippet shows a call and may leave its result unused.
target_compile_options(batchdyn_readme_snippets PRIVATE -Wno-unused-variable -Wno-unused-but-set-variable)
add_test(NAME readme_cpp_snippets COMMAND batchdyn_readme_snippets WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
