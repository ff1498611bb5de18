// ggml's dequantisation as an executed reference (tests/dequant.rs, scripts/check-dequant.sh).
//
// Usage: dequant-ref IN.gguf OUT.f32
//
// Reads IN's tensor infos with ggml's own GGUF reader, dequantises each tensor's bytes with
// ggml_get_type_traits(type)->to_float, writes all values (f32, this machine's byte order,
// tensor after tensor) to OUT.f32 and prints one stdout line per tensor: NAME TYPE N (tab
// separated). Exits 1 with a message on stderr when IN cannot be read or a type has no
// to_float. Built by scripts/llama/build-program.sh (--release 0.3.36 for q1_0 and q2_0).
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "ggml.h"
#include "gguf.h"

int main(int argc, char ** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: dequant-ref IN.gguf OUT.f32\n");
        return 2;
    }
    struct gguf_init_params params = {/*no_alloc =*/ true, /*ctx =*/ nullptr};
    struct gguf_context * ctx = gguf_init_from_file(argv[1], params);
    if (ctx == nullptr) {
        fprintf(stderr, "dequant-ref: ggml cannot read %s\n", argv[1]);
        return 1;
    }
    FILE * in = fopen(argv[1], "rb");
    FILE * out = fopen(argv[2], "wb");
    if (in == nullptr || out == nullptr) {
        fprintf(stderr, "dequant-ref: cannot open %s or %s\n", argv[1], argv[2]);
        return 1;
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(ctx); i++) {
        const enum ggml_type type = gguf_get_tensor_type(ctx, i);
        const struct ggml_type_traits * traits = ggml_get_type_traits(type);
        if (traits->to_float == nullptr) {
            fprintf(stderr, "dequant-ref: type %d has no to_float\n", (int) type);
            return 1;
        }
        const size_t size = gguf_get_tensor_size(ctx, i);
        const int64_t n = (int64_t) (size / ggml_type_size(type)) * ggml_blck_size(type);
        std::vector<uint8_t> bytes(size);
        std::vector<float> values(n);
        if (fseek(in, (long) (gguf_get_data_offset(ctx) + gguf_get_tensor_offset(ctx, i)), SEEK_SET) != 0 ||
            fread(bytes.data(), 1, size, in) != size) {
            fprintf(stderr, "dequant-ref: cannot read tensor %" PRId64 "\n", i);
            return 1;
        }
        traits->to_float(bytes.data(), values.data(), n);
        if (fwrite(values.data(), sizeof(float), n, out) != (size_t) n) {
            fprintf(stderr, "dequant-ref: cannot write %s\n", argv[2]);
            return 1;
        }
        printf("%s\t%d\t%" PRId64 "\n", gguf_get_tensor_name(ctx, i), (int) type, n);
    }
    fclose(in);
    if (fclose(out) != 0) {
        fprintf(stderr, "dequant-ref: cannot write %s\n", argv[2]);
        return 1;
    }
    gguf_free(ctx);
    return 0;
}
