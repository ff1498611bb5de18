// fit_params: runs llama.cpp 0.3.36's own `--fit` (common_fit_params, common/fit.cpp) on the
// CPU for a model, with the release's common defaults (context 0: the trained one, flash
// attention auto), and prints as JSON what it chose: its status, the context size, and the
// host memory it counted as available (ggml_backend_dev_memory of the CPU device: the total,
// not the free memory). The margin ("--fit-target") simulates a smaller host: the fit must
// leave `margin` bytes of the host's total unused.
//
// Usage: fit_params MODEL [--margin BYTES] [--ctx-min N] [--parallel N] [--ctx N]

#include "llama.h"
#include "ggml-backend.h"
#include "fit.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char ** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fit_params MODEL [--margin BYTES] [--ctx-min N] [--parallel N] [--ctx N]\n");
        return 2;
    }
    size_t margin = 1024ull * 1024 * 1024; // common's default --fit-target
    uint32_t ctx_min = 4096;                // common's default --fit-ctx
    llama_context_params cparams = llama_context_default_params();
    cparams.n_ctx = 0;
    cparams.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;
    cparams.swa_full = false;
    cparams.n_threads = 1;
    cparams.n_threads_batch = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        const char * v = argv[i + 1];
        if (k == "--margin") margin = strtoull(v, nullptr, 10);
        else if (k == "--ctx-min") ctx_min = (uint32_t) atoi(v);
        else if (k == "--parallel") cparams.n_seq_max = (uint32_t) atoi(v);
        else if (k == "--ctx") cparams.n_ctx = (uint32_t) atoi(v);
        else {
            fprintf(stderr, "fit_params: unknown option %s\n", k.c_str());
            return 2;
        }
    }
    if (!getenv("FIT_PARAMS_LOG")) {
        llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    }
    llama_backend_init();
    llama_model_params mparams = llama_model_default_params();
    std::vector<float> split(llama_max_devices(), 0.0f);
    std::vector<llama_model_tensor_buft_override> overrides(llama_max_tensor_buft_overrides());
    std::vector<size_t> margins(llama_max_devices(), margin);
    common_params_fit_status status = common_fit_params(argv[1], &mparams, &cparams, split.data(),
        overrides.data(), margins.data(), ctx_min, nullptr, GGML_LOG_LEVEL_ERROR);
    size_t free = 0, total = 0;
    ggml_backend_dev_memory(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU), &free, &total);
    const char * names[] = {"success", "failure", "error"};
    printf("{\"status\":\"%s\",\"n_ctx\":%u,\"host_total\":%zu,\"n_gpu_layers\":%d}\n", names[status],
        cparams.n_ctx, total, mparams.n_gpu_layers);
    llama_backend_free();
    return 0;
}
