#!/usr/bin/env python3
"""gen_inline_cxx.py: write a C++ program of a few thousand lines for
bench/inline_cost.py (issue 15: what the inlined calls cost the index).

    gen_inline_cxx.py OUTDIR [UNITS] [NAMESPACES_PER_UNIT]

Writes OUTDIR/gen_N.cpp (UNITS files, default 4) and OUTDIR/gen_entry.cpp.
Each namespace has a class template with small member functions, a
function template, a lambda, an operator and std::vector / std::map /
std::string use, so that -O2 inlines many small calls (ours and the
standard library's), as in a real C++ program. Deterministic output."""
import os
import sys

NAMESPACE = """\
namespace gen{u}_{n} {{
template <typename T>
class Accumulator {{
public:
    explicit Accumulator(T seed) : total_(seed) {{}}
    void add(T value) {{ total_ += scale(value); values_.push_back(value); }}
    T total() const {{ return total_; }}
    std::size_t count() const {{ return values_.size(); }}
    T largest() const {{
        T best = total_;
        for (const T &value : values_)
            if (value > best)
                best = value;
        return best;
    }}
private:
    static T scale(T value) {{ return value * static_cast<T>({k}) + static_cast<T>(1); }}
    T total_;
    std::vector<T> values_;
}};

struct Point {{
    long x, y;
    Point operator+(const Point &other) const {{ return Point{{x + other.x, y + other.y}}; }}
    bool operator<(const Point &other) const {{ return x != other.x ? x < other.x : y < other.y; }}
}};

template <typename Container>
long sum_of(const Container &container)
{{
    long sum = 0;
    for (const auto &item : container)
        sum += static_cast<long>(item);
    return sum;
}}

static inline std::string label(int value)
{{
    std::string text = "item{n}-";
    text += std::to_string(value);
    return text;
}}

long run(int rounds)
{{
    Accumulator<long> longs({k});
    Accumulator<double> doubles(0.5);
    std::map<std::string, Point> points;
    Point origin{{0, 0}};
    for (int i = 0; i < rounds; i++) {{
        longs.add(i);
        doubles.add(i * 0.25);
        origin = origin + Point{{i, {k}}};
        points[label(i % 7)] = origin;
    }}
    auto weigh = [&](const std::pair<const std::string, Point> &entry) {{
        return static_cast<long>(entry.first.size()) + entry.second.x - entry.second.y;
    }};
    long weight = 0;
    for (const auto &entry : points)
        weight += weigh(entry);
    std::vector<int> small{{1, 2, 3, {k}}};
    return longs.total() + longs.largest() + static_cast<long>(doubles.total()) +
           static_cast<long>(longs.count()) + weight + sum_of(small);
}}
}} // namespace gen{u}_{n}
"""


def main():
    out = sys.argv[1]
    units = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    per_unit = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    os.makedirs(out, exist_ok=True)
    lines = 0
    # gen_entry.cpp first: bench.mk's rule makes it, and the units must
    # not be older than it.
    text = "".join("long gen_unit_%d(int rounds);\n" % u for u in range(units))
    text += 'extern "C" long gen_entry(int rounds)\n{\n    long sum = 0;\n'
    text += "".join("    sum += gen_unit_%d(rounds);\n" % u for u in range(units))
    text += "    return sum;\n}\n"
    with open(os.path.join(out, "gen_entry.cpp"), "w") as f:
        f.write(text)
    lines += text.count("\n")
    for u in range(units):
        text = "#include <cstddef>\n#include <map>\n#include <string>\n#include <vector>\n\n"
        text += "".join(NAMESPACE.format(u=u, n=n, k=u * per_unit + n + 2) for n in range(per_unit))
        text += "long gen_unit_%d(int rounds)\n{\n    long sum = 0;\n" % u
        text += "".join("    sum += gen%d_%d::run(rounds);\n" % (u, n) for n in range(per_unit))
        text += "    return sum;\n}\n"
        with open(os.path.join(out, "gen_%d.cpp" % u), "w") as f:
            f.write(text)
        lines += text.count("\n")
    print("%d lines in %d units" % (lines, units + 1))


if __name__ == "__main__":
    main()
