#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    batchdyn::cli::usage(std::cout);
    return args.empty() ? 1 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "info") return batchdyn::cli::info(args, std::cout, std::cerr);
  if (command == "eval") return batchdyn::cli::eval(args, std::cout, std::cerr);
  if (command == "bench") return batchdyn::cli::bench(args, std::cout, std::cerr);
  std::cerr << "batchdyn: unknown command '" << command << "'\n";
  batchdyn::cli::usage(std::cerr);
  return 1;
}
