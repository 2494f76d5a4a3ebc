// WorkerException: how an exception thrown on a DataLoader worker thread (or a
// ChunkDataset preloader) reaches the thread that asked for the batch, as
// libtorch's torch::data::WorkerException: the original is kept to rethrow.
#pragma once

#include <exception>
#include <string>

#include "kernels/error.h"

namespace gradiens::data {

class WorkerException : public Error {
 public:
  explicit WorkerException(std::exception_ptr original)
      : Error(describe(original)), original_exception(std::move(original)) {}

  std::exception_ptr original_exception;

 private:
  static std::string describe(const std::exception_ptr& original) {
    std::string message = "Caught exception in DataLoader worker thread. Original message: ";
    try {
      std::rethrow_exception(original);
    } catch (const std::exception& e) {
      message += e.what();
    } catch (...) {
      message += "(an exception that is not a std::exception)";
    }
    return message;
  }
};

}  // namespace gradiens::data
