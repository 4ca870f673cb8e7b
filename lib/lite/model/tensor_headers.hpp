#pragma once
// The headers of the two raw tensor-file formats lite reads, NumPy .npy and idx (MNIST), parsed and checked
// against the file's size. Torch-free (see tensor_headers.cpp): load_dataset (whole files) and the chunked
// reader (a file's first bytes) both use it, and the fuzz target tensor_headers compiles it alone.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lite::model {

// The element types lite reads from these files (their .npy spelling: <f4 <f8 <f2 <i8 <i4 |u1 |i1 |b1).
enum class ElementType { float32, float64, float16, int64, int32, uint8, int8, boolean };

size_t element_bytes(ElementType type);

struct TensorFileHeader {
  ElementType element = ElementType::uint8;
  std::vector<int64_t> shape;  // as stored, C order; every dimension >= 0
  uint64_t data_offset = 0;    // where element 0 starts
  uint64_t data_bytes = 0;     // elements x element size; data_offset + data_bytes <= the file's size
  // Bytes of one record (element size x every dimension but the first); their product with any subset of the
  // dimensions fits 64 bits.
  uint64_t record_bytes() const;
};

// `head` holds the file's first bytes (the whole file, or a prefix that contains the header) and `file_size`
// is the whole file's size. Throws lite::InputError naming `file` for a malformed header, an element type lite
// does not read, a shape whose size does not fit 64 bits, or a file shorter than its header says.
TensorFileHeader parse_npy_header(std::string_view head, uint64_t file_size, const std::string& file);
TensorFileHeader parse_idx_header(std::string_view head, uint64_t file_size, const std::string& file);

}  // namespace lite::model
