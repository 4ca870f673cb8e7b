// The data-file format table (data_format.hpp): the name decides first, then the first bytes.
#include <doctest/doctest.h>

#include <string>

#include "lite/model/data_format.hpp"

using lite::model::DataFormat;

TEST_CASE("every data format has a name, a description and a rule") {
  for (const auto& f : lite::model::data_formats()) {
    CHECK(std::string(f.name).size() > 0);
    CHECK(std::string(f.description).size() > 0);
    CHECK((f.named != nullptr || f.holds != nullptr));
  }
}

TEST_CASE("the file name tells .npy, .npz and idx") {
  using lite::model::data_format_by_name;
  CHECK(data_format_by_name("x.npy") == DataFormat::npy);
  CHECK(data_format_by_name("calib.npz") == DataFormat::npz);
  CHECK(data_format_by_name("train-images-idx3-ubyte.gz") == DataFormat::idx);
  CHECK(data_format_by_name("t10k-labels-idx1-ubyte") == DataFormat::idx);
  CHECK(data_format_by_name("images-ubyte") == DataFormat::idx);
  CHECK(data_format_by_name("mnist-idx.npy") == DataFormat::npy);  // table order: .npy before idx
  CHECK_FALSE(data_format_by_name("eval.pt").has_value());
  CHECK_FALSE(data_format_by_name("x.npy.gz").has_value());
}

TEST_CASE("the first bytes tell .npy, .npz and torch.save's zip") {
  using lite::model::data_format_by_contents;
  CHECK(data_format_by_contents(std::string("\x93NUMPY\x01\x00", 8)) == DataFormat::npy);
  CHECK(data_format_by_contents(std::string("PK\x03\x04....x.npy....")) == DataFormat::npz);
  CHECK(data_format_by_contents(std::string("PK\x03\x04....archive/data.pkl")) == DataFormat::torch_save);
  CHECK(data_format_by_contents(std::string("PK\x03\x04..data.pkl..x.npy")) == DataFormat::torch_save);
  CHECK(data_format_by_contents(std::string("PK\x03\x04") + std::string(600, '.') + "x.npy") ==
        DataFormat::torch_save);  // only the first 512 bytes are looked at
  CHECK_FALSE(data_format_by_contents(std::string("\x1f\x8b\x08")).has_value());
  CHECK(lite::model::starts_gzip(std::string("\x1f\x8b\x08")));
  CHECK_FALSE(lite::model::starts_gzip("PK"));
  CHECK_FALSE(data_format_by_contents("").has_value());
}

TEST_CASE("the name wins over the contents") {
  using lite::model::data_format_of;
  CHECK(data_format_of("data.npz", std::string("\x93NUMPY")) == DataFormat::npz);
  CHECK(data_format_of("data.bin", std::string("\x93NUMPY")) == DataFormat::npy);
  CHECK_FALSE(data_format_of("data.bin", "plain text").has_value());
}
