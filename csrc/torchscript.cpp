// The TorchScript shim: torch::jit::compile plus running a compiled function, behind the C
// interface of torchscript.h. Every C++ exception becomes an error string.
#include "torchscript.h"

#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/jit.h>
#include <torch/script.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

struct dlc_script {
  std::shared_ptr<torch::jit::CompilationUnit> unit;
};

namespace {
char *copy_string(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (out != nullptr) {
    std::memcpy(out, s.c_str(), s.size() + 1);
  }
  return out;
}
}  // namespace

extern "C" dlc_script *dlc_script_compile(const char *source, char **error) {
  try {
    return new dlc_script{torch::jit::compile(source)};
  } catch (const std::exception &e) {
    *error = copy_string(e.what());
  } catch (...) {
    *error = copy_string("unknown C++ exception while compiling");
  }
  return nullptr;
}

extern "C" void dlc_script_free(dlc_script *script) { delete script; }

extern "C" int dlc_script_run(dlc_script *script, const char *name, void *const *inputs,
                              size_t n_inputs, void **outputs, size_t max_outputs,
                              size_t *n_outputs, char **error) {
  try {
    std::vector<c10::IValue> args;
    args.reserve(n_inputs);
    for (size_t i = 0; i < n_inputs; ++i) {
      args.emplace_back(*static_cast<const at::Tensor *>(inputs[i]));
    }
    c10::IValue result = script->unit->get_function(name)(args);
    std::vector<at::Tensor> tensors;
    if (result.isTuple()) {
      for (const auto &e : result.toTupleRef().elements()) {
        tensors.push_back(e.toTensor());
      }
    } else {
      tensors.push_back(result.toTensor());
    }
    if (tensors.size() > max_outputs) {
      *error = copy_string("more outputs than expected");
      return 1;
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
      outputs[i] = new at::Tensor(tensors[i]);
    }
    *n_outputs = tensors.size();
    return 0;
  } catch (const std::exception &e) {
    *error = copy_string(e.what());
  } catch (...) {
    *error = copy_string("unknown C++ exception while running");
  }
  return 1;
}

extern "C" void dlc_jit_configure(int optimize, int profiling, int fuse_cpu) {
  torch::jit::setGraphExecutorOptimize(optimize != 0);
  torch::jit::getProfilingMode() = profiling != 0;
  torch::jit::getExecutorMode() = profiling != 0;
  torch::jit::overrideCanFuseOnCPU(fuse_cpu != 0);
  torch::jit::setTensorExprFuserEnabled(fuse_cpu != 0);
}

extern "C" void dlc_free_string(char *s) { std::free(s); }
