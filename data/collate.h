// default_collate: how a DataLoader turns a list of samples into one batch,
// following the structure of the samples, as torch.utils.data.default_collate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "engine/tensor.h"

namespace gradiens::data {

// What default_collate does with a batch of samples of each type:
//   Tensor                          -> stack(batch, 0)
//   integer / bool / floating       -> 1-D int64 / bool / float64 tensor
//   Example<D, T>                   -> Example of the collated data and targets
//   std::pair, std::tuple           -> the same kind, each position collated
//   std::map<std::string, V>        -> the keys of the first sample, each collated
//   std::vector<V> (equal lengths)  -> a vector, each position collated
//   std::string                     -> the strings as they are
// convert() is the same walk for one sample without automatic batching (no
// new dimension): tensors stay, numbers become 0-dim tensors, so the batch
// type is the same whether the DataLoader batches or not.
namespace detail {

template <class T>
inline constexpr bool always_false = false;

Tensor collate_tensors(const std::vector<Tensor>& batch);
Tensor collate_integers(const std::vector<int64_t>& batch);
Tensor collate_floats(const std::vector<double>& batch);
Tensor collate_bools(const std::vector<bool>& batch);
Tensor scalar_integer(int64_t value);
Tensor scalar_float(double value);
Tensor scalar_bool(bool value);
[[noreturn]] void throw_collate_error(const std::string& message);

template <class T>
struct Collation {
  static_assert(always_false<T>,
                "default_collate: batch must contain tensors, numbers, Examples, pairs, tuples, maps with string "
                "keys, vectors or strings; write a custom collate for this sample type");
};

template <class T>
using collated_t = typename Collation<std::decay_t<T>>::type;

template <>
struct Collation<Tensor> {
  using type = Tensor;
  static Tensor collate(std::vector<Tensor>&& batch) { return collate_tensors(batch); }
  static Tensor convert(Tensor&& sample) { return std::move(sample); }
};

template <class T>
  requires std::is_arithmetic_v<T>
struct Collation<T> {
  using type = Tensor;
  static Tensor collate(std::vector<T>&& batch) {
    if constexpr (std::is_same_v<T, bool>) return collate_bools(batch);
    else if constexpr (std::is_floating_point_v<T>) return collate_floats({batch.begin(), batch.end()});
    else return collate_integers({batch.begin(), batch.end()});
  }
  static Tensor convert(T&& sample) {
    if constexpr (std::is_same_v<T, bool>) return scalar_bool(sample);
    else if constexpr (std::is_floating_point_v<T>) return scalar_float(static_cast<double>(sample));
    else return scalar_integer(static_cast<int64_t>(sample));
  }
};

template <>
struct Collation<std::string> {
  using type = std::vector<std::string>;
  static type collate(std::vector<std::string>&& batch) { return std::move(batch); }
  static type convert(std::string&& sample) { return {std::move(sample)}; }
};

template <class D, class T>
struct Collation<Example<D, T>> {
  using type = Example<collated_t<D>, collated_t<T>>;
  static type collate(std::vector<Example<D, T>>&& batch) {
    std::vector<D> data;
    std::vector<T> targets;
    data.reserve(batch.size());
    targets.reserve(batch.size());
    for (auto& e : batch) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {Collation<D>::collate(std::move(data)), Collation<T>::collate(std::move(targets))};
  }
  static type convert(Example<D, T>&& sample) {
    return {Collation<D>::convert(std::move(sample.data)), Collation<T>::convert(std::move(sample.target))};
  }
};

template <class... Ts>
struct Collation<std::tuple<Ts...>> {
  using type = std::tuple<collated_t<Ts>...>;
  static type collate(std::vector<std::tuple<Ts...>>&& batch) {
    return collate_positions(batch, std::index_sequence_for<Ts...>{});
  }
  static type convert(std::tuple<Ts...>&& sample) {
    return std::apply([](auto&&... v) { return type(Collation<std::decay_t<decltype(v)>>::convert(std::move(v))...); },
                      std::move(sample));
  }

 private:
  template <size_t... I>
  static type collate_positions(std::vector<std::tuple<Ts...>>& batch, std::index_sequence<I...>) {
    return type(collate_position<I>(batch)...);
  }
  template <size_t I>
  static auto collate_position(std::vector<std::tuple<Ts...>>& batch) {
    using E = std::tuple_element_t<I, std::tuple<Ts...>>;
    std::vector<E> column;
    column.reserve(batch.size());
    for (auto& sample : batch) column.push_back(std::move(std::get<I>(sample)));
    return Collation<E>::collate(std::move(column));
  }
};

template <class A, class B>
struct Collation<std::pair<A, B>> {
  using type = std::pair<collated_t<A>, collated_t<B>>;
  static type collate(std::vector<std::pair<A, B>>&& batch) {
    std::vector<A> first;
    std::vector<B> second;
    for (auto& p : batch) {
      first.push_back(std::move(p.first));
      second.push_back(std::move(p.second));
    }
    return {Collation<A>::collate(std::move(first)), Collation<B>::collate(std::move(second))};
  }
  static type convert(std::pair<A, B>&& sample) {
    return {Collation<A>::convert(std::move(sample.first)), Collation<B>::convert(std::move(sample.second))};
  }
};

template <class V>
struct Collation<std::map<std::string, V>> {
  using type = std::map<std::string, collated_t<V>>;
  static type collate(std::vector<std::map<std::string, V>>&& batch) {
    type out;
    for (const auto& entry : batch.front()) {
      std::vector<V> column;
      column.reserve(batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        auto it = batch[i].find(entry.first);
        if (it == batch[i].end())
          throw_collate_error("default_collate: sample " + std::to_string(i) + " has no key '" + entry.first +
                              "' (sample 0 has it)");
        column.push_back(std::move(it->second));
      }
      out.emplace(entry.first, Collation<V>::collate(std::move(column)));
    }
    return out;
  }
  static type convert(std::map<std::string, V>&& sample) {
    type out;
    for (auto& [key, value] : sample) out.emplace(key, Collation<V>::convert(std::move(value)));
    return out;
  }
};

template <class V>
struct Collation<std::vector<V>> {
  using type = std::vector<collated_t<V>>;
  static type collate(std::vector<std::vector<V>>&& batch) {
    const size_t width = batch.front().size();
    for (const auto& sample : batch)
      if (sample.size() != width) throw_collate_error("each element in list of batch should be of equal size");
    type out;
    out.reserve(width);
    for (size_t j = 0; j < width; ++j) {
      std::vector<V> column;
      column.reserve(batch.size());
      for (auto& sample : batch) column.push_back(std::move(sample[j]));
      out.push_back(Collation<V>::collate(std::move(column)));
    }
    return out;
  }
  static type convert(std::vector<V>&& sample) {
    type out;
    out.reserve(sample.size());
    for (auto& v : sample) out.push_back(Collation<V>::convert(std::move(v)));
    return out;
  }
};

}  // namespace detail

// The DataLoader's default collate (a function object, so that the batch type
// can be deduced from the sample type).
struct DefaultCollate {
  template <class E>
  detail::collated_t<E> operator()(std::vector<E> batch) const {
    if (batch.empty()) detail::throw_collate_error("default_collate: the batch is empty");
    return detail::Collation<E>::collate(std::move(batch));
  }
  // One sample without automatic batching (PyTorch's default_convert).
  template <class E>
  detail::collated_t<E> convert(E sample) const {
    return detail::Collation<E>::convert(std::move(sample));
  }
};

inline constexpr DefaultCollate default_collate{};

}  // namespace gradiens::data
