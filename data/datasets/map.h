// MapDataset: a dataset whose batches are another dataset's batches passed through a
// transform (what dataset.map(transform) returns), as torch::data::datasets::MapDataset.
#pragma once

#include <utility>

#include "data/datasets/base.h"

namespace gr::data::datasets {

template <typename SourceDataset, typename AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                                       typename AppliedTransform::OutputBatchType,
                                       typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType = typename AppliedTransform::OutputBatchType;

  MapDataset(DatasetType dataset, TransformType transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType indices) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(indices)));
  }
  std::optional<size_t> size() const override { return dataset_.size(); }

  const SourceDataset& dataset() const noexcept { return dataset_; }
  const AppliedTransform& transform() const noexcept { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

template <typename D, typename T>
MapDataset<D, T> map(D dataset, T transform) {
  static_assert(std::is_same_v<typename D::BatchType, typename T::InputBatchType>,
                "the transform's input batch type must be the dataset's batch type");
  return {std::move(dataset), std::move(transform)};
}

}  // namespace gr::data::datasets
