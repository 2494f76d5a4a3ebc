// Device: where a tensor's memory lives (cpu, or cuda:N once that backend exists).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace gradiens {

enum class DeviceType : int8_t { CPU, CUDA };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;

class Device {
 public:
  Device(DeviceType type = DeviceType::CPU, int index = -1) : type_(type), index_(index) {}
  // "cpu", "cuda", "cuda:1"; anything else is a gradiens::Error.
  Device(std::string_view spec);
  Device(const char* spec) : Device(std::string_view(spec)) {}

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const;
  friend bool operator==(const Device& a, const Device& b) {
    // cuda without an index means the current device, which is 0 until CUDA exists.
    auto idx = [](const Device& d) { return d.index_ < 0 ? 0 : d.index_; };
    return a.type_ == b.type_ && idx(a) == idx(b);
  }

 private:
  DeviceType type_;
  int index_;
};

// Prints str() ("cpu", "cuda:0"), as libtorch's operator<< for a Device.
std::ostream& operator<<(std::ostream& out, const Device& device);

}  // namespace gradiens
