// A data file for a model with several inputs binds to forward's arguments: by name (a dict), by position (a tuple,
// labels last), and every refusal names what the file holds and what forward expected.
#include <doctest/doctest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include "../torch_fixtures.hpp"
#include "lite/core/error.hpp"
#include "lite/model/input_binding.hpp"

using namespace lite;
namespace fs = std::filesystem;

namespace {

const model::ForwardArguments kPair{{"a", "b"}, 2};

std::string pickled_value(const c10::IValue& v) {
  auto bytes = torch::pickle_save(v);
  return std::string(bytes.begin(), bytes.end());
}

std::string binding_error(const fs::path& p, const model::ForwardArguments& forward) {
  try {
    model::load_dataset(p, std::nullopt, forward);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

c10::Dict<std::string, torch::Tensor> dict_of(const std::vector<std::pair<std::string, torch::Tensor>>& items) {
  c10::Dict<std::string, torch::Tensor> d;
  for (const auto& [k, v] : items) d.insert(k, v);
  return d;
}

}  // namespace

TEST_CASE("a dict binds its tensors to forward's arguments by name, in forward's order") {
  test::ScratchDir dir("binding");
  auto p = dir.file("pair.pt", pickled_value(dict_of({{"b", torch::ones({3, 2})}, {"a", torch::zeros({3, 5})},
                                                       {"y", torch::tensor({0, 1, 1})}})));
  const auto d = model::load_dataset(p, std::nullopt, kPair);
  CHECK(d.x.size(1) == 5);
  REQUIRE(d.more_inputs.size() == 1);
  CHECK(d.more_inputs[0].size(1) == 2);
  REQUIRE(d.has_labels());
  const auto batch = model::batch_inputs(d, 1, 5);
  REQUIRE(batch.size() == 2);
  CHECK(batch[0].size(0) == 2);
  CHECK(batch[1].size(0) == 2);
  CHECK(model::take_first(d, 2).more_inputs[0].size(0) == 2);
}

TEST_CASE("a tuple binds by position, with the labels last when there is one item more") {
  test::ScratchDir dir("binding");
  auto ids = torch::randint(0, 9, {4, 3}, torch::kInt64);
  auto p = dir.file("t.pt", pickled_value(c10::ivalue::Tuple::create({torch::ones({4, 2}), ids, torch::tensor({0, 1, 0, 1})})));
  const auto d = model::load_dataset(p, std::nullopt, kPair);
  REQUIRE(d.more_inputs.size() == 1);
  CHECK((d.more_inputs[0].scalar_type() == torch::kInt64));
  CHECK(d.has_labels());
  auto wrong = dir.file("four.pt", pickled_value(c10::ivalue::Tuple::create(
                                      {torch::ones({4, 2}), ids, ids, torch::tensor({0, 1, 0, 1})})));
  CHECK(binding_error(wrong, kPair).find("4 items") != std::string::npos);
}

TEST_CASE("refusals name the keys held and the arguments expected") {
  test::ScratchDir dir("binding");
  auto other = dir.file("o.pt", pickled_value(dict_of({{"left", torch::ones({3, 2})}, {"right", torch::ones({3, 2})}})));
  auto msg = binding_error(other, kPair);
  CHECK(msg.find("'left', 'right'") != std::string::npos);
  CHECK(msg.find("forward takes a, b") != std::string::npos);

  auto missing = dir.file("m.pt", pickled_value(dict_of({{"a", torch::ones({3, 2})}, {"y", torch::tensor({0, 1, 1})}})));
  CHECK(binding_error(missing, kPair).find("no input 'b'") != std::string::npos);

  auto uneven = dir.file("u.pt", pickled_value(dict_of({{"a", torch::ones({3, 2})}, {"b", torch::ones({2, 2})}})));
  CHECK(binding_error(uneven, kPair).find("input 'b' holds 2 samples but 'a' holds 3") != std::string::npos);

  auto single = dir.file("s.pt", pickled_value(torch::ones({3, 2})));
  CHECK(binding_error(single, kPair).find("holds 1 input but the model's forward takes 2 (a, b)") != std::string::npos);
}

TEST_CASE("a model of one input reads today's forms, and its argument's name as a key") {
  test::ScratchDir dir("binding");
  const model::ForwardArguments one{{"tokens"}, 1};
  auto named = dir.file("n.pt", pickled_value(dict_of({{"tokens", torch::ones({3, 2})}})));
  CHECK(model::load_dataset(named, std::nullopt, one).size() == 3);
  auto pair = dir.file("p.pt", pickled_value(c10::ivalue::Tuple::create({torch::ones({3, 2}), torch::tensor({0, 1, 1})})));
  const auto d = model::load_dataset(pair, std::nullopt, one);
  CHECK(d.has_labels());
  CHECK(d.more_inputs.empty());
}
