#!/usr/bin/env python3
"""Write a large C++ program for the demangling benchmark
(bench/demangle_cost.c): GROUPS namespaces, each with class templates,
function templates, lambdas and operators instantiated over a few
standard containers, so that its symbol table holds thousands of long
mangled names as real template code does.
Usage: gen_templates.py OUT.cc GROUPS"""
import sys

out_path, groups = sys.argv[1], int(sys.argv[2])
types = ["int", "double", "std::string", "std::vector<int>", "std::map<std::string, int>",
         "std::pair<long, std::string>"]
lines = ["#include <map>", "#include <string>", "#include <vector>", "#include <cstdio>", ""]
for g in range(groups):
    lines += [
        "namespace project { namespace module%d {" % g,
        "template <typename T, int N> struct Holder {",
        "    std::vector<T> items;",
        "    __attribute__((noinline)) void add(const T &item) { items.push_back(item); }",
        "    __attribute__((noinline)) std::size_t count() const { return items.size() + N; }",
        "    template <typename F> __attribute__((noinline)) int visit(F function) const {",
        "        int total = 0;",
        "        for (const T &item : items) total += function(item);",
        "        return total;",
        "    }",
        "};",
        "template <typename T, int N>",
        "__attribute__((noinline)) Holder<T, N> operator+(Holder<T, N> left, const Holder<T, N> &right) {",
        "    for (const T &item : right.items) left.add(item);",
        "    return left;",
        "}",
        "template <typename K, typename V>",
        "__attribute__((noinline)) std::map<K, std::vector<V>> group(const std::vector<std::pair<K, V>> &rows) {",
        "    std::map<K, std::vector<V>> out;",
        "    for (const auto &row : rows) out[row.first].push_back(row.second);",
        "    return out;",
        "}",
        "template <typename T> __attribute__((noinline)) int use(int seed) {",
        "    Holder<T, %d> holder;" % (g % 7),
        "    holder.add(T());",
        "    Holder<T, %d> both = holder + holder;" % (g % 7),
        "    return (int)both.count() + both.visit([seed](const T &) { return seed; });",
        "}",
        "__attribute__((noinline)) int run(int seed) {",
        "    int total = 0;",
    ]
    for t in types:
        lines.append("    total += use<%s>(seed);" % t)
    lines += [
        "    std::vector<std::pair<std::string, %s>> rows(2);" % types[g % len(types)],
        "    total += (int)group(rows).size();",
        "    return total;",
        "}",
        "} }",
        "",
    ]
lines.append("int main(int argc, char **) {")
lines.append("    int total = 0;")
for g in range(groups):
    lines.append("    total += project::module%d::run(argc);" % g)
lines += ['    std::printf("%d\\n", total);', "    return 0;", "}"]
with open(out_path, "w") as out:
    out.write("\n".join(lines) + "\n")
