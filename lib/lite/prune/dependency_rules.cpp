// The rule table of the dependency analysis: every op kind a rule reads, in one place. An op kind listed
// here is followed by its rule; one not listed that outputs a tensor blocks the channels it touches, with
// its kind as the reason (dependency_graph.cpp, visit). Adding an op: one line here, the rule in its
// family's file (dependency_rules_internal.hpp lists them), a case in tests/unit/prune/test_dependency_rules.cpp.
#include <stdexcept>

#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

void skip_rule(Walk& /*w*/, Node* /*n*/, const std::string& /*kind*/) {}

const std::vector<OpRule>& op_rules() {
  static const std::vector<OpRule> table = {
      {{"prim::Constant", "prim::GetAttr"}, skip_rule},
      {{"aten::conv1d", "aten::conv2d", "aten::conv3d"}, conv_rule},
      {{"aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d"}, conv_transpose_rule},
      {{"aten::linear"}, linear_rule},
      {{"aten::embedding"}, embedding_rule},
      {{"aten::batch_norm"}, batch_norm_rule},
      {{"aten::layer_norm"}, layer_norm_rule},
      {{"aten::flatten"}, flatten_rule},
      {{"aten::view", "aten::reshape"}, reshape_rule},
      {{"aten::permute"}, permute_rule},
      {{"aten::expand"}, expand_rule},
      {{"aten::select", "aten::slice"}, index_other_dim_rule},
      {{"aten::mean", "aten::sum", "aten::amax"}, reduce_rule},
      {{"aten::pad", "aten::constant_pad_nd"}, pad_rule},
      {{"prim::CallMethod"}, call_rule},
      {{"prim::TupleUnpack", "prim::TupleIndex"}, tuple_item_rule},
      {{"prim::TupleConstruct"}, tuple_construct_rule},
      {{"prim::ListConstruct"}, list_rule},
      {{"aten::append"}, append_rule},
      {{"aten::cat"}, cat_rule},
      {{"prim::DictConstruct", "aten::dict"}, dict_rule},
      {{"aten::_set_item"}, set_item_rule},
      {{"aten::__getitem__"}, get_item_rule},
      {{"aten::values"}, values_rule},
      {{"aten::list"}, list_copy_rule},
      {{"aten::relu",          "aten::relu_",       "aten::relu6",        "aten::relu6_",      "aten::hardtanh",
        "aten::hardtanh_",     "aten::hardswish",   "aten::hardswish_",   "aten::hardsigmoid", "aten::hardsigmoid_",
        "aten::sigmoid",       "aten::sigmoid_",    "aten::silu",         "aten::silu_",       "aten::gelu",
        "aten::tanh",          "aten::tanh_",       "aten::leaky_relu",   "aten::leaky_relu_", "aten::elu",
        "aten::elu_",          "aten::mish",        "aten::dropout",      "aten::dropout_",    "aten::feature_dropout",
        "aten::alpha_dropout", "aten::contiguous",  "aten::clone",        "aten::detach"},
       elementwise_rule},
      {{"aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d", "aten::avg_pool1d", "aten::avg_pool2d",
        "aten::avg_pool3d", "aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d", "aten::adaptive_avg_pool3d",
        "aten::upsample_nearest2d", "aten::upsample_bilinear2d"},
       spatial_rule},
      {{"aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::mul", "aten::mul_", "aten::div", "aten::div_"},
       binary_rule},
  };
  return table;
}

Rule find_rule(const std::string& kind) {
  static const std::unordered_map<std::string, Rule> by_kind = [] {
    std::unordered_map<std::string, Rule> index;
    for (const auto& entry : op_rules())
      for (const auto& k : entry.kinds)
        if (!index.emplace(k, entry.rule).second) throw std::logic_error("two dependency rules for " + k);
    return index;
  }();
  auto it = by_kind.find(kind);
  return it == by_kind.end() ? nullptr : it->second;
}

}  // namespace lite::prune::detail
