#pragma once
// A gzip-compressed .npy or idx file inflated within bounds its own header and its compressed size set.
// Torch-free; see gzip_tensor.cpp.
#include <cstdint>
#include <functional>
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

// The same inflation and checks, the bytes handed to `sink` as they come (in pieces of about 1 MiB; the first
// holds the whole header) instead of kept: for a file inflated to disk. Returns the bytes inflated, which equal
// the header's declared size.
uint64_t inflate_tensor_file_to(std::string_view gz, TensorFormat format, uint64_t max_bytes,
                                const std::function<void(const char* bytes, size_t n)>& sink, const std::string& file);

// Header + data bytes the header of the gzip-compressed tensor file `gz` declares, inflating only as far as the
// header (checked against kMaxDeflateRatio:1 like inflate_tensor_file).
uint64_t declared_tensor_bytes(std::string_view gz, TensorFormat format, const std::string& file);

}  // namespace lite::model
