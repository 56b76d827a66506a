// Google Benchmark glue: a console reporter that also keeps each case's median real time, so a
// driver can put the medians beside its peers' in one table.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace sparseflow::bench {

/// Prints as Google Benchmark's console reporter does and records, per case (the name given to
/// RegisterBenchmark), the median of its repetitions in seconds — or its only run's time when it
/// ran without repetitions.
class MedianReporter : public benchmark::ConsoleReporter {
 public:
  MedianReporter() : benchmark::ConsoleReporter(OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override;

  /// Case name → median seconds.
  const std::map<std::string, double>& medians() const { return medians_; }
  /// Case name → error message, for cases that called state.SkipWithError.
  const std::map<std::string, std::string>& errors() const { return errors_; }

 private:
  std::map<std::string, double> medians_;
  std::map<std::string, std::string> errors_;
};

}  // namespace sparseflow::bench
