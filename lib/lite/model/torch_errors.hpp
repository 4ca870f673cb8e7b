#pragma once
// libtorch reports failures as c10::Error (with a C++ backtrace) or, from the TorchScript interpreter,
// as a runtime_error holding a TorchScript traceback whose last line carries the reason. Both become
// one readable line here.
#include <exception>
#include <string>

namespace lite::model {

std::string torch_error_reason(const std::exception& e);

}  // namespace lite::model
