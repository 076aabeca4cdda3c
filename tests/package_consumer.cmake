# Installs this build into a scratch prefix, then configures, builds and runs
# examples/consumer against it with find_package(batchdyn): what a user's project does
# (reference kernels and the SIMD batch engine on oneTBB threads).
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE ${WORK})
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix)
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/prefix
     -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
step(${CMAKE_COMMAND} --build ${WORK}/build)
step(${WORK}/build/consumer ${WORK}/prefix/share/batchdyn/models/humanoid.urdf)
