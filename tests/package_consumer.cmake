# Installs this build into a scratch prefix and moves the prefix elsewhere (an install must be
# relocatable: RUNPATHs are $ORIGIN-relative, the models are found relative to the package and
# the executable). Then, from another directory: configures, builds and runs examples/consumer
# against the moved prefix with find_package(batchdyn), what a user's project does; runs the
# installed `batchdyn bench` on its default (installed) model; imports the installed Python
# package with the Python it was built for (PYTHON; empty without the module), steps a shipped
# model found through it and every registered task.
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/elsewhere)
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${WORK}/elsewhere)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix)
file(RENAME ${WORK}/prefix ${WORK}/moved)
set(prefix ${WORK}/moved)
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK}/build -DCMAKE_PREFIX_PATH=${prefix}
     -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
step(${CMAKE_COMMAND} --build ${WORK}/build)
step(${WORK}/build/consumer ${prefix}/share/batchdyn/models/humanoid.urdf)
if(WITH_CLI)
  step(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${prefix}/bin/batchdyn bench --envs 8 --threads 1 --seconds 0.05)
endif()
if(PYTHON)
  file(GLOB package_dirs ${prefix}/lib/python3*/site-packages)
  if(NOT package_dirs)
    message(FATAL_ERROR "the Python package was built but not installed under ${prefix}/lib/python3*/site-packages")
  endif()
  step(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH --unset=BATCHDYN_MODELS PYTHONPATH=${package_dirs}
       ${PYTHON} -c "
import os, batchdyn
from batchdyn import vector_env
from batchdyn.models import models_dir
prefix = os.path.realpath('${prefix}')
assert os.path.realpath(batchdyn.__file__).startswith(prefix), batchdyn.__file__
assert os.path.realpath(models_dir()).startswith(prefix), models_dir()
assert os.path.exists(os.path.join(models_dir(), 'unitree_go2', 'scene.xml')), 'the MJCF models (Go2Walk) are not installed'
batch = batchdyn.Batch(batchdyn.load(os.path.join(models_dir(), 'humanoid.urdf'), root='free'), 8)
batch.step(1e-3)
for task in vector_env.registered():  # every shipped task builds from the installed models (and their meshes)
    env = vector_env.make(task, num_envs=4, threads=1)
    env.reset(seed=0)
    env.step(env.action_space.sample())
print('installed package at', batchdyn.__file__, 'stepped', batch.num_envs, 'humanoids and the tasks', vector_env.registered())
")
endif()
