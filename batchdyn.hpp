// batchdyn: everything a user needs, in one include (installed as <batchdyn/batchdyn.hpp>).
#pragma once

#include "batch/reference_eval.hpp"
#include "batch/validation.hpp"
#include "kernels/aba.hpp"
#include "kernels/configuration.hpp"
#include "kernels/constrained_dynamics.hpp"
#include "kernels/constraints.hpp"
#include "kernels/crba.hpp"
#include "kernels/jacobian.hpp"
#include "kernels/kinematics.hpp"
#include "kernels/rnea.hpp"
#include "models/generators.hpp"
#include "topology/constraints_io.hpp"
#include "topology/loops.hpp"
#include "topology/model.hpp"
#include "topology/scene.hpp"
#include "topology/urdf.hpp"
