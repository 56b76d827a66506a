// Cache sizes from /sys/devices/system/cpu/cpu0/cache: level, type and size of each index.
#include "support/cache_info.h"

#include <fstream>
#include <sstream>

namespace sparseflow::support {
namespace {

std::string readLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// "48K", "1024K", "32M" → bytes; 0 when unreadable.
int64_t parseSize(const std::string& text) {
  std::istringstream in(text);
  int64_t value = 0;
  char unit = 0;
  if (!(in >> value)) return 0;
  in >> unit;
  if (unit == 'K') value <<= 10;
  if (unit == 'M') value <<= 20;
  return value;
}

CacheSizes detect() {
  CacheSizes sizes;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = readLine(dir + "/level");
    if (level.empty()) break;
    const std::string type = readLine(dir + "/type");
    const int64_t size = parseSize(readLine(dir + "/size"));
    if (size <= 0) continue;
    if (level == "1" && type == "Data") sizes.l1d = size;
    if (level == "2") sizes.l2 = size;
    if (level == "3") sizes.l3 = size;
  }
  return sizes;
}

}  // namespace

std::string CacheSizes::toString() const {
  std::ostringstream out;
  out << "L1d " << (l1d >> 10) << " KiB, L2 " << (l2 >> 10) << " KiB, L3 " << (l3 >> 20) << " MiB";
  return out.str();
}

const CacheSizes& cacheSizes() {
  static const CacheSizes sizes = detect();
  return sizes;
}

}  // namespace sparseflow::support
