// fit_probe: loads a model with the given context parameters on the CPU, with llama.cpp's own
// code, and prints the memory figures llama.cpp reports as JSON, in bytes.
//
// Usage: fit_probe MODEL [--ctx N] [--batch N] [--ubatch N] [--parallel N] [--type-k T]
//                        [--type-v T] [--flash-attn 0|1|auto] [--mmap 0|1] [--swa-full 0|1]
//                        [--kv-unified 0|1] [--embeddings 0|1]
//
// Unset options take the defaults of the release's `common` (llama-cli, llama-server), not the
// C API's: 0.3.16 a context of 4096 and flash attention off; 0.3.36 the trained context (0) and
// flash attention auto. Both: no full-size SWA cache, a single thread.
//
// The figures are those of llama.cpp's log lines ("model buffer size", "KV buffer size",
// "RS buffer size", "output buffer size", "compute buffer size"), which print MiB with two
// decimals; to have them in bytes, the program is linked with
// -Wl,--wrap=ggml_backend_buffer_get_size,--wrap=ggml_backend_sched_get_buffer_size: the
// wrappers remember the last size llama.cpp asked for, and the log callback pairs each
// "buffer size" line with it (llama.cpp asks for the size in the call that prints the line).
// The KV cache's own summary line ("size = ... K (f16): ... MiB, V ...") is kept as text.

#include "llama.h"
#include "ggml.h"
#include "ggml-backend.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
size_t __real_ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer);
size_t __real_ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend);

static size_t g_last_size = 0;

size_t __wrap_ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer) {
    g_last_size = __real_ggml_backend_buffer_get_size(buffer);
    return g_last_size;
}

size_t __wrap_ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend) {
    g_last_size = __real_ggml_backend_sched_get_buffer_size(sched, backend);
    return g_last_size;
}
}

static std::string json_escape(const std::string & s) {
    std::string out;
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += (char) c;
        } else if (c < 0x20) {
            char buf[8];
            snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += (char) c;
        }
    }
    return out;
}

struct figure {
    std::string kind; // model, kv, rs, output, compute
    std::string name; // the buffer's name as llama.cpp prints it
    size_t bytes;
};

static std::vector<figure> g_figures;
static std::vector<std::string> g_summaries; // the KV/RS caches' "size = ..." lines
static std::vector<std::string> g_errors;
static std::string g_line;

// The buffer's name: the word before the marker, e.g. "   CPU_Mapped model buffer size = ".
static std::string name_before(const std::string & line, size_t at) {
    size_t end = at;
    while (end > 0 && line[end - 1] == ' ') {
        end--;
    }
    size_t start = end;
    while (start > 0 && line[start - 1] != ' ' && line[start - 1] != ':') {
        start--;
    }
    return line.substr(start, end - start);
}

static void on_line(const std::string & line) {
    static const char * kinds[][2] = {
        {" model buffer size =", "model"},
        {" KV buffer size =", "kv"},
        {" RS buffer size =", "rs"},
        {"  output buffer size =", "output"},
        {" compute buffer size =", "compute"},
    };
    for (auto & k : kinds) {
        size_t at = line.find(k[0]);
        if (at != std::string::npos) {
            g_figures.push_back({k[1], name_before(line, at), g_last_size});
            return;
        }
    }
    // The KV cache is llama_kv_cache_unified in 0.3.16, llama_kv_cache in 0.3.36.
    if ((line.rfind("llama_kv_cache_unified: size =", 0) == 0) ||
        (line.rfind("llama_kv_cache: size =", 0) == 0) ||
        (line.rfind("llama_memory_recurrent: size =", 0) == 0)) {
        g_summaries.push_back(line);
    }
}

static void log_cb(ggml_log_level level, const char * text, void *) {
    if (level == GGML_LOG_LEVEL_ERROR) {
        g_errors.push_back(text);
    }
    if (getenv("FIT_PROBE_LOG")) {
        fputs(text, stderr);
    }
    // Lines may arrive in pieces (GGML_LOG_LEVEL_CONT); assemble them.
    g_line += text;
    size_t nl;
    while ((nl = g_line.find('\n')) != std::string::npos) {
        on_line(g_line.substr(0, nl));
        g_line.erase(0, nl + 1);
    }
}

// LLAMA_CPP_RELEASE is set by build-program.sh (316, 336): 0.3.36 made flash attention a
// three-way choice (auto, the default, disabled, enabled).
static void set_flash_attn(llama_context_params & cparams, const char * v) {
#if LLAMA_CPP_RELEASE >= 336
    cparams.flash_attn_type = strcmp(v, "auto") == 0 ? LLAMA_FLASH_ATTN_TYPE_AUTO
                            : atoi(v) != 0           ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                                                     : LLAMA_FLASH_ATTN_TYPE_DISABLED;
#else
    if (strcmp(v, "auto") == 0) {
        fprintf(stderr, "fit_probe: flash attention auto needs 0.3.36\n");
        exit(2);
    }
    cparams.flash_attn = atoi(v) != 0;
#endif
}

// 0.3.36 replaced the use_mmap flag by a load mode (common's default: auto, which maps).
static void set_mmap(llama_model_params & mparams, bool on) {
#if LLAMA_CPP_RELEASE >= 336
    mparams.load_mode = on ? LLAMA_LOAD_MODE_MMAP : LLAMA_LOAD_MODE_NONE;
#else
    mparams.use_mmap = on;
#endif
}

static ggml_type type_from_name(const char * name) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * n = ggml_type_name((ggml_type) t);
        if (n && strcmp(n, name) == 0) {
            return (ggml_type) t;
        }
    }
    fprintf(stderr, "fit_probe: unknown type %s\n", name);
    exit(2);
}

int main(int argc, char ** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fit_probe MODEL [--ctx N] [--batch N] [--ubatch N] [--parallel N] "
                        "[--type-k T] [--type-v T] [--flash-attn 0|1|auto] [--mmap 0|1] [--swa-full 0|1] "
                        "[--kv-unified 0|1] [--embeddings 0|1]\n");
        return 2;
    }
    const char * path = argv[1];
    llama_model_params mparams = llama_model_default_params();
    mparams.n_gpu_layers = 0;
    llama_context_params cparams = llama_context_default_params();
#if LLAMA_CPP_RELEASE >= 336
    cparams.n_ctx = 0;
    cparams.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;
#else
    cparams.n_ctx = 4096;
    cparams.flash_attn = false;
#endif
    cparams.swa_full = false;
    cparams.n_threads = 1;
    cparams.n_threads_batch = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        const char * v = argv[i + 1];
        if (k == "--ctx") cparams.n_ctx = atoi(v);
        else if (k == "--batch") cparams.n_batch = atoi(v);
        else if (k == "--ubatch") cparams.n_ubatch = atoi(v);
        else if (k == "--parallel") cparams.n_seq_max = atoi(v);
        else if (k == "--type-k") cparams.type_k = type_from_name(v);
        else if (k == "--type-v") cparams.type_v = type_from_name(v);
        else if (k == "--flash-attn") set_flash_attn(cparams, v);
        else if (k == "--mmap") set_mmap(mparams, atoi(v) != 0);
        else if (k == "--swa-full") cparams.swa_full = atoi(v) != 0;
        else if (k == "--kv-unified") cparams.kv_unified = atoi(v) != 0;
        else if (k == "--embeddings") cparams.embeddings = atoi(v) != 0;
        else {
            fprintf(stderr, "fit_probe: unknown option %s\n", k.c_str());
            return 2;
        }
    }

    llama_log_set(log_cb, nullptr);
    llama_backend_init();

    std::string stage = "ok";
    uint32_t n_ctx = 0;
    llama_model * model = llama_model_load_from_file(path, mparams);
    if (!model) {
        stage = "model";
    } else {
        llama_context * ctx = llama_init_from_model(model, cparams);
        if (!ctx) {
            stage = "context";
        } else {
            n_ctx = llama_n_ctx(ctx);
            llama_free(ctx);
        }
        llama_model_free(model);
    }
    llama_backend_free();

    printf("{\"status\":\"%s\",\"n_ctx\":%u,\"figures\":[", stage.c_str(), n_ctx);
    for (size_t i = 0; i < g_figures.size(); i++) {
        printf("%s{\"kind\":\"%s\",\"name\":\"%s\",\"bytes\":%zu}", i ? "," : "", g_figures[i].kind.c_str(),
               json_escape(g_figures[i].name).c_str(), g_figures[i].bytes);
    }
    printf("],\"summaries\":[");
    for (size_t i = 0; i < g_summaries.size(); i++) {
        printf("%s\"%s\"", i ? "," : "", json_escape(g_summaries[i]).c_str());
    }
    printf("],\"errors\":[");
    for (size_t i = 0; i < g_errors.size(); i++) {
        printf("%s\"%s\"", i ? "," : "", json_escape(g_errors[i]).c_str());
    }
    printf("]}\n");
    return 0;
}
