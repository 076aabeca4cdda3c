// The `batchdyn` command: subcommands as functions taking the argument list after the
// subcommand name and returning the process exit code. They never throw.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace batchdyn::cli {

int info(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int eval(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int usage(std::ostream& out);

}  // namespace batchdyn::cli
