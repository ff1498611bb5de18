// ggml's GGUF reader as an executed reference: the program tests/conformance/record.py drives
// with --ggml (its docstring gives the protocol). For each file argument it calls
// gguf_init_from_file twice, first with no_alloc = true and no ggml context ("meta"), then
// with no_alloc = false and a ggml_context** so the tensor data is read ("data"), and prints
// per call one stdout line
//     FILE [meta]: NULL
// or  FILE [meta]: OK ver=V align=A data_off=D n_kv=K n_t=N [NAME off=O size=S]...
// after the stderr line "=== FILE mode=meta-only" (or mode=load-data), so ggml's own error
// messages (stderr) can be told apart. Each call runs in a child process, so a call that
// aborts (llama.cpp 0.3.16's ggml asserts on some files) still lets the other run; the
// program then ends by the first such signal, which record.py reports as the crash.
// Built by scripts/llama/build-program.sh.
#include <cinttypes>
#include <csignal>
#include <initializer_list>
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>

#include "ggml.h"
#include "gguf.h"

static void read_one(const char * path, bool data) {
    fprintf(stderr, "=== %s mode=%s\n", path, data ? "load-data" : "meta-only");
    fflush(stderr);
    struct ggml_context * tensors = nullptr;
    struct gguf_init_params params = {/*no_alloc =*/ !data, /*ctx =*/ data ? &tensors : nullptr};
    struct gguf_context * ctx = gguf_init_from_file(path, params);
    printf("%s [%s]: ", path, data ? "data" : "meta");
    if (ctx == nullptr) {
        printf("NULL\n");
    } else {
        const int64_t n_tensors = gguf_get_n_tensors(ctx);
        printf("OK ver=%u align=%zu data_off=%zu n_kv=%" PRId64 " n_t=%" PRId64, gguf_get_version(ctx),
               gguf_get_alignment(ctx), gguf_get_data_offset(ctx), gguf_get_n_kv(ctx), n_tensors);
        for (int64_t i = 0; i < n_tensors; i++) {
            printf(" [%s off=%zu size=%zu]", gguf_get_tensor_name(ctx, i), gguf_get_tensor_offset(ctx, i),
                   gguf_get_tensor_size(ctx, i));
        }
        printf("\n");
        gguf_free(ctx);
    }
    if (tensors != nullptr) {
        ggml_free(tensors);
    }
    fflush(stdout);
}

// Runs read_one in a child; returns the signal that ended it, or 0.
static int read_in_child(const char * path, bool data) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        read_one(path, data);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

int main(int argc, char ** argv) {
    setenv("GGML_NO_BACKTRACE", "1", 1);  // no gdb backtrace on an abort: stderr is the record
    int first_signal = 0;
    for (int i = 1; i < argc; i++) {
        for (bool data : {false, true}) {
            int sig = read_in_child(argv[i], data);
            if (first_signal == 0) {
                first_signal = sig;
            }
        }
    }
    if (first_signal != 0) {
        signal(first_signal, SIG_DFL);
        raise(first_signal);
    }
    return 0;
}
