// The shared evaluation-data rules (eval_data.hpp). Torch-free.
#include "lite/model/eval_data.hpp"

#include "lite/core/options.hpp"

namespace lite::model {

void validate(const EvalData& d) {
  if (d.labels && !d.eval) throw OptionError("labels", "gives the labels of the evaluation data", "add {eval} FILE");
  option_rules::at_least("eval_batch", double(d.eval_batch), 1);
}

void add_reads(FileRoles& roles, const EvalData& d) {
  roles.reads_optional("{eval}", d.eval).reads_optional("{labels}", d.labels);
}

}  // namespace lite::model
