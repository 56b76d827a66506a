// Prints the one table of a benchmark run: the machine's limits, then every result row that the
// benchmark programs appended (bench_report LIMITS_FILE ROWS_FILE...).
#include <iostream>
#include <vector>

#include "common/machine_limits.h"
#include "common/report.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: bench_report LIMITS_FILE ROWS_FILE...\n";
    return 2;
  }
  try {
    auto limits = sparseflow::bench::loadLimits(argv[1]);
    std::vector<sparseflow::bench::ResultRow> rows;
    for (int i = 2; i < argc; ++i) {
      auto more = sparseflow::bench::readRows(argv[i]);
      rows.insert(rows.end(), more.begin(), more.end());
    }
    std::cout << "Limits measured in this run: " << limits.toString() << "\n\n";
    sparseflow::bench::printTable(std::cout, rows);
  } catch (const std::exception& e) {
    std::cerr << "bench_report: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
