/* C interface of the TorchScript shim (torchscript.cpp): compile TorchScript source with
 * torch::jit::compile and run its functions on tensors that cross as `at::Tensor *` (tch's
 * C_tensor). Rust bindings are generated from this header by bindgen (build.rs). */
#ifndef DLCFUZZ_TORCHSCRIPT_H
#define DLCFUZZ_TORCHSCRIPT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled TorchScript compilation unit. */
typedef struct dlc_script dlc_script;

/* Compiles `source`; NULL on failure, with *error set (free it with dlc_free_string). */
dlc_script *dlc_script_compile(const char *source, char **error);

/* Frees a compilation unit. */
void dlc_script_free(dlc_script *script);

/* Runs function `name` on `n_inputs` tensors (`at::Tensor *`). On success returns 0 and
 * writes up to `max_outputs` new `at::Tensor *` (owned by the caller) to `outputs` and their
 * count to `*n_outputs`; on failure returns 1 with *error set. */
int dlc_script_run(dlc_script *script, const char *name, void *const *inputs, size_t n_inputs,
                   void **outputs, size_t max_outputs, size_t *n_outputs, char **error);

/* Sets the JIT's global switches: graph-executor optimization, the profiling executor, and
 * CPU fusion (the TensorExpr fuser). */
void dlc_jit_configure(int optimize, int profiling, int fuse_cpu);

/* Frees a string the shim allocated. */
void dlc_free_string(char *s);

#ifdef __cplusplus
}
#endif

#endif
