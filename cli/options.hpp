// Command-line options shared by the subcommands: a minimal --key value / --flag parser and
// the MODEL argument (URDF, scene file or generator, plus --root and --constraints).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topology/model.hpp"

namespace batchdyn::cli {

struct Options {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::vector<std::string> flags;
  bool has_flag(const std::string& f) const;
  std::optional<std::string> get(const std::string& k) const;
};

// Throws Error on an unknown option or a missing value.
Options parse_options(const std::vector<std::string>& args, const std::vector<std::string>& with_value,
                      const std::vector<std::string>& flags);

// Options every command that loads a model accepts (with a value / flags).
inline const std::vector<std::string> kModelOptions = {"--root", "--constraints", "--contacts", "--lock-joints", "--armature", "--closure"};
inline const std::vector<std::string> kModelFlags = {"--balance-inertia", "--strict-inertia", "--self-collision"};
// `extra` followed by the model options (for parse_options).
std::vector<std::string> with_model_options(std::vector<std::string> extra, const std::vector<std::string>& model_ones);

// The model named by the single positional argument (or `default_model` with a free-flyer
// root when there is none and a default is given), with --root, --balance-inertia /
// --strict-inertia, --lock-joints, --armature, --constraints and --contacts applied (in that order).
Model load_model(const Options& o, const std::string& default_model = "");

// Numbers on the command line are read strictly: the whole string, in range, or an Error naming
// the option, the range and what was given ("--envs 1e3", "--threads 2x", "--seconds 0x10",
// "--seconds inf" and "--envs 99999999999" are refused, not truncated).
// Option `name` as an integer in [lo, hi]; `default_value` when absent.
int integer_option(const Options& o, const std::string& name, int default_value, int lo, int hi);
// Option `name` as a finite number in [lo, hi] (lo_exclusive: in (lo, hi]); `default_value` when absent.
double number_option(const Options& o, const std::string& name, double default_value, double lo, double hi, bool lo_exclusive = false);

// Option `name` given as on or off; `default_value` when absent; an Error naming it otherwise.
bool on_off_option(const Options& o, const std::string& name, bool default_value);
// --passive-forces on|off (eval: off by default, Pinocchio's dynamics; bench: on, as a simulator).
bool passive_forces_option(const Options& o, bool default_value);

}  // namespace batchdyn::cli
