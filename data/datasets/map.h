// MapDataset: a dataset whose batches are another dataset's batches passed through a
// transform (what dataset.map(transform) returns), as torch::data::datasets::MapDataset.
#pragma once

#include <concepts>
#include <type_traits>
#include <utility>

#include "data/batch_context.h"
#include "data/datasets/base.h"
#include "data/transforms/stack.h"
#include "data/transforms/tensor.h"

namespace gr::data::datasets {

namespace detail {

// Stack over a dataset of tensor rows: the batch is gathered row by row (Note [Row gather]).
template <typename D, typename T>
constexpr bool kGathersRows = std::is_same_v<T, transforms::Stack<Example<>>> && requires(const D& d) {
  { d.rows() } -> std::same_as<Example<>>;
};

// A TensorTransform mapped over batches that are one stacked example (after Stack): it
// changes the batch's data at once. The image transforms give what they give on the
// examples (Note [Transform randomness]).
template <typename Batch, typename T>
struct TransformsStacked : std::false_type {};
template <typename Target, typename T>
struct TransformsStacked<Example<Tensor, Target>, T> : std::is_base_of<transforms::TensorTransform<Target>, T> {};

template <typename D, typename T>
using MappedBatch = std::conditional_t<TransformsStacked<typename D::BatchType, T>::value, typename D::BatchType,
                                       typename T::OutputBatchType>;

}  // namespace detail

template <typename SourceDataset, typename AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                                       detail::MappedBatch<SourceDataset, AppliedTransform>,
                                       typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType = detail::MappedBatch<SourceDataset, AppliedTransform>;

  MapDataset(DatasetType dataset, TransformType transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType indices) override {
    if constexpr (detail::kGathersRows<SourceDataset, AppliedTransform>) {
      if (auto batch = data::detail::gather_rows(dataset_.rows(), indices)) return std::move(*batch);
      return transform_.apply_batch(dataset_.get_batch(std::move(indices)));
    } else {
      // The transform makes new tensors: the loader pins those, not the inner batch.
      auto batch = [&] {
        data::detail::NoPinScope no_pin;
        return dataset_.get_batch(std::move(indices));
      }();
      if constexpr (detail::TransformsStacked<typename SourceDataset::BatchType, AppliedTransform>::value) {
        batch.data = transform_(std::move(batch.data));
        return batch;
      } else {
        return transform_.apply_batch(std::move(batch));
      }
    }
  }
  std::optional<size_t> size() const override { return dataset_.size(); }

  // The source's epoch, for a source that has one (TokenDataset); see Note [Datasets are values].
  void set_epoch(int64_t epoch)
    requires requires(SourceDataset& d) { d.set_epoch(int64_t{}); }
  {
    dataset_.set_epoch(epoch);
  }

  const SourceDataset& dataset() const noexcept { return dataset_; }
  const AppliedTransform& transform() const noexcept { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

template <typename D, typename T>
MapDataset<D, T> map(D dataset, T transform) {
  static_assert(std::is_same_v<typename D::BatchType, typename T::InputBatchType> ||
                    detail::TransformsStacked<typename D::BatchType, T>::value,
                "the transform's input batch type must be the dataset's batch type");
  return {std::move(dataset), std::move(transform)};
}

}  // namespace gr::data::datasets
