# ctest labels of the doctest cases, read by ctest after doctest has listed them (CTestTestfile
# includes this file after doctest's lists): every case of batchdyn_tests,
# batchdyn_no_allocation_tests and batchdyn_mjcf_tests is `fast` but those matching a pattern below, `slow` (each takes
# more than ~5 s on a 2-core machine: allocation counting over whole engine runs, 100,000-link
# models, 10 s rollouts). `ctest -L fast` runs the fast part; `./build.sh test` runs everything.
set(batchdyn_slow_case_patterns
  "do not allocate once the engine has run"
  "^a 100,000-link"
  "passive robots whose closed chains pass through singular poses")
foreach(case IN LISTS batchdyn_tests_TESTS batchdyn_no_allocation_tests_TESTS batchdyn_mjcf_tests_TESTS)
  set(label fast)
  foreach(pattern IN LISTS batchdyn_slow_case_patterns)
    if(case MATCHES "${pattern}")
      set(label slow)
    endif()
  endforeach()
  set_tests_properties("${case}" PROPERTIES LABELS ${label})
endforeach()
