// Sequencers: how a DataLoader hands out the results its workers finish out of
// order (libtorch's torch::data::detail::sequencers). NoSequencer passes them
// on as they come; OrderedSequencer holds each back until those with lower
// sequence numbers have gone. Results carry a `sequence_number` member.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/error.h"

namespace gradiens::data::detail::sequencers {

template <class Result>
struct Sequencer {
  using ResultProducer = std::function<std::optional<Result>()>;
  virtual ~Sequencer() = default;
  // The next result to hand out, pulling from `next_result` as needed;
  // std::nullopt once next_result has none.
  virtual std::optional<Result> next(ResultProducer next_result) = 0;
};

template <class Result>
struct NoSequencer final : Sequencer<Result> {
  using typename Sequencer<Result>::ResultProducer;
  std::optional<Result> next(ResultProducer next_result) override { return next_result(); }
};

// At most max_jobs results are in flight at once, so a ring of max_jobs slots,
// indexed by sequence number modulo its size, holds every early arrival.
template <class Result>
struct OrderedSequencer : Sequencer<Result> {
  using typename Sequencer<Result>::ResultProducer;

  explicit OrderedSequencer(size_t max_jobs) : buffer_(max_jobs) {
    GD_CHECK(max_jobs > 0, "OrderedSequencer: max_jobs must be positive");
  }

  std::optional<Result> next(ResultProducer next_result) override {
    if (std::optional<Result>& held = slot(next_sequence_number_)) {
      std::optional<Result> out = std::move(held);
      held.reset();
      ++next_sequence_number_;
      return out;
    }
    for (;;) {
      std::optional<Result> result = next_result();
      if (!result) return std::nullopt;
      if (result->sequence_number == next_sequence_number_) {
        ++next_sequence_number_;
        return result;
      }
      std::optional<Result>& place = slot(result->sequence_number);
      GD_INTERNAL_ASSERT(!place.has_value(), "OrderedSequencer: two results in flight share a slot");
      place = std::move(result);
    }
  }

  std::optional<Result>& slot(size_t sequence_number) { return buffer_.at(sequence_number % buffer_.size()); }

  // Public, as libtorch's: the sequence number handed out next and the ring.
  size_t next_sequence_number_ = 0;
  std::vector<std::optional<Result>> buffer_;
};

}  // namespace gradiens::data::detail::sequencers
