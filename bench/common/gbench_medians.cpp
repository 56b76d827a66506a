// MedianReporter: keeps the "median" aggregate (or the single run) of every case in seconds.
#include "common/gbench_medians.h"

namespace sparseflow::bench {

void MedianReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    const std::string& name = run.run_name.function_name;
    if (run.error_occurred) {
      errors_[name] = run.error_message;
      continue;
    }
    const double seconds =
        run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
    if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
      medians_[name] = seconds;
    } else if (run.run_type == Run::RT_Iteration && run.repetitions <= 1) {
      medians_[name] = seconds;
    }
  }
  benchmark::ConsoleReporter::ReportRuns(runs);
}

}  // namespace sparseflow::bench
