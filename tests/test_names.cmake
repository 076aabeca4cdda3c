# Every doctest case runs under CTest: doctest_discover_tests registers one CTest test per case
# with --test-case=<name>, and a ';' in a name splits it as a CMake list, so that test matches
# nothing and "passes" with no case run. Fails naming each such case of EXECUTABLE.
execute_process(COMMAND ${EXECUTABLE} --list-test-cases --no-version RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --list-test-cases failed (${rc})")
endif()
string(REPLACE ";" "<semicolon>" out "${out}")
string(REPLACE "\n" ";" lines "${out}")
set(bad "")
foreach(line IN LISTS lines)
  if(line MATCHES "<semicolon>")
    string(REPLACE "<semicolon>" ";" line "${line}")
    string(APPEND bad "\n  ${line}")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "test case names with ';' never run under CTest (use ',' instead):${bad}")
endif()
