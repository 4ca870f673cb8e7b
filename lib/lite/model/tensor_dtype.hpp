#pragma once
// The torch dtype of an element read from a .npy or idx file (tensor_headers.hpp, which stays torch-free).
// Its own small header, included only by the two readers (dataset.cpp, chunked_dataset.cpp): dataset.hpp is
// included across every torch area, and a change there recompiles all of them.
#include <c10/core/ScalarType.h>

#include "lite/model/tensor_headers.hpp"

namespace lite::model {

inline c10::ScalarType scalar_type_of(ElementType type) {
  switch (type) {
    case ElementType::float32: return c10::kFloat;
    case ElementType::float64: return c10::kDouble;
    case ElementType::float16: return c10::kHalf;
    case ElementType::int64: return c10::kLong;
    case ElementType::int32: return c10::kInt;
    case ElementType::uint8: return c10::kByte;
    case ElementType::int8: return c10::kChar;
    case ElementType::boolean: return c10::kBool;
  }
  return c10::kByte;
}

}  // namespace lite::model
