#pragma once
// A gzip-compressed .npy or idx file inflated within bounds its own header and its compressed size set.
// Torch-free; see gzip_tensor.cpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lite::model {

enum class TensorFormat { npy, idx };

// The file `gz` inflates to (a gzip stream, or several concatenated, as gzip and zlib's gzread accept). Throws
// InputError naming `file` for corrupt gzip data, a malformed header, a header that declares more bytes than
// `gz` can inflate to (deflate expands at most kMaxDeflateRatio:1) or more than `max_bytes`, and data that
// inflates to fewer or more bytes than the header declares. Inflating stops at the declared size.
std::vector<char> inflate_tensor_file(std::string_view gz, TensorFormat format, uint64_t max_bytes,
                                      const std::string& file);

}  // namespace lite::model
