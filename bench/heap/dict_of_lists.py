# The "real program" workload of the heap benchmark: CPython building a
# large dict of lists of strings. Run with PYTHONMALLOC=malloc so that every
# object goes through malloc (and through the hook layer when preloaded).
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
table = {}
for i in range(count):
    table["key%d" % i] = ["item %d of %d" % (j, i) for j in range(20)]
total = sum(len(item) for items in table.values() for item in items)
print(len(table), total)
