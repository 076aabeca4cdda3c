// One table of names per enum, written next to the enum and read by every front end (the CLI,
// the benchmarks, Python), so that a setting is spelled one way everywhere and a wrong spelling
// gets the same error wherever it is given.
//
//   inline constexpr NameTable<Integrator> kIntegrators[] = {{Integrator::SemiImplicitEuler, "euler"}, ...};
//   name_of(kIntegrators, Integrator::RungeKutta4)      // "rk4"
//   parse_name(kIntegrators, "rk4", "--integrator")    // Integrator::RungeKutta4; an unknown name throws
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "topology/model.hpp"

namespace batchdyn {

template <class E>
struct NameTable {
  E value;
  const char* name;
};

// The name of `value` in `table` ("?" for a value the table lacks).
template <class E, std::size_t N>
constexpr const char* name_of(const NameTable<E> (&table)[N], E value) {
  for (const NameTable<E>& entry : table)
    if (entry.value == value) return entry.name;
  return "?";
}

// The names of `table`, "a, b or c".
template <class E, std::size_t N>
std::string names_of(const NameTable<E> (&table)[N]) {
  std::string names;
  for (std::size_t k = 0; k < N; ++k) names += (k == 0 ? "" : k + 1 == N ? " or " : ", ") + std::string(table[k].name);
  return names;
}

// The value called `name` in `table`. Throws Error "<who> must be a, b or c, got 'x'".
template <class E, std::size_t N>
E parse_name(const NameTable<E> (&table)[N], std::string_view name, const std::string& who) {
  for (const NameTable<E>& entry : table)
    if (name == entry.name) return entry.value;
  throw Error(who + " must be " + names_of(table) + ", got '" + std::string(name) + "'");
}

}  // namespace batchdyn
