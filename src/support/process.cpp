// The public face of temp_paths.h and quote.h for programs (sparseflow/process.h).
#include "sparseflow/process.h"

#include "support/quote.h"
#include "support/temp_paths.h"

namespace sparseflow {

StagingPath::StagingPath(const std::string& path, bool directory)
    : registration_(std::make_unique<support::TempPathRegistration>(
          path, directory ? support::TempPathRegistration::Kind::kDirectory
                          : support::TempPathRegistration::Kind::kFile)) {}
StagingPath::~StagingPath() = default;
StagingPath::StagingPath(StagingPath&&) noexcept = default;
StagingPath& StagingPath::operator=(StagingPath&&) noexcept = default;

void StagingPath::release() {
  if (registration_) registration_->release();
}

void removeTempFilesOnSignals() {
  support::installTempCleanupOnSignals();
}

std::string printableMessage(std::string_view message) {
  return support::printable(message);
}

}  // namespace sparseflow
