// The reference side of gguf-tokenizer's checks and benchmark: llama.cpp's own tokenizer
// (libllama, vocab_only), called in-process.
//
//   tokenizer-ref cases MODEL CASES ADD_SPECIAL PARSE_SPECIAL
//       CASES holds records "<byte length>\n<bytes>"; prints one line per case: the ids
//       separated by spaces, or "ERROR <what>" where llama_tokenize throws.
//   tokenizer-ref roundtrip MODEL
//       test-tokenizer-1's token check: prints "token ID" for every token whose piece
//       (special) does not tokenize (parse_special) and detokenize back to itself.
//   tokenizer-ref bench MODEL TEXT REPS
//       tokenizes the whole of TEXT REPS times (add_special, parse_special); prints
//       "tokens N best_seconds S" (the fastest repetition).
#include "llama.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

static std::vector<llama_token> tokenize(const llama_vocab * vocab, const std::string & text, bool add_special, bool parse_special) {
    std::vector<llama_token> out(text.size() + 2);
    int n = llama_tokenize(vocab, text.data(), (int32_t) text.size(), out.data(), (int32_t) out.size(), add_special, parse_special);
    if (n < 0) {
        out.resize(-n);
        n = llama_tokenize(vocab, text.data(), (int32_t) text.size(), out.data(), (int32_t) out.size(), add_special, parse_special);
    }
    out.resize(n);
    return out;
}

static std::string detokenize(const llama_vocab * vocab, const std::vector<llama_token> & ids) {
    std::string text(ids.size() * 8 + 16, '\0');
    int n = llama_detokenize(vocab, ids.data(), (int32_t) ids.size(), &text[0], (int32_t) text.size(), false, true);
    if (n < 0) {
        text.resize(-n);
        n = llama_detokenize(vocab, ids.data(), (int32_t) ids.size(), &text[0], (int32_t) text.size(), false, true);
    }
    text.resize(n);
    return text;
}

static std::string read_file(const char * path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

static void quiet(enum ggml_log_level, const char *, void *) {}

int main(int argc, char ** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s cases|roundtrip|bench MODEL ...\n", argv[0]);
        return 1;
    }
    const std::string mode = argv[1];
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model * model = llama_model_load_from_file(argv[2], mp);
    if (!model) {
        fprintf(stderr, "cannot load %s\n", argv[2]);
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);

    if (mode == "cases" && argc == 6) {
        const std::string raw = read_file(argv[3]);
        const bool add_special = atoi(argv[4]) != 0;
        const bool parse_special = atoi(argv[5]) != 0;
        size_t pos = 0;
        while (pos < raw.size()) {
            const size_t nl = raw.find('\n', pos);
            const size_t len = std::stoul(raw.substr(pos, nl - pos));
            const std::string text = raw.substr(nl + 1, len);
            pos = nl + 1 + len;
            try {
                const auto ids = tokenize(vocab, text, add_special, parse_special);
                for (size_t i = 0; i < ids.size(); i++) {
                    printf(i ? " %d" : "%d", ids[i]);
                }
                printf("\n");
            } catch (const std::exception & e) {
                printf("ERROR %s\n", e.what());
            }
        }
    } else if (mode == "roundtrip" && argc == 3) {
        const int n = llama_vocab_n_tokens(vocab);
        for (int i = 0; i < n; i++) {
            const std::string str = detokenize(vocab, {i});
            try {
                const auto ids = tokenize(vocab, str, false, true);
                if (detokenize(vocab, ids) != str) {
                    printf("token %d\n", i);
                }
            } catch (const std::exception &) {
                printf("token %d throws\n", i);
            }
        }
    } else if (mode == "bench" && argc == 5) {
        const std::string text = read_file(argv[3]);
        const int reps = atoi(argv[4]);
        double best = 1e30;
        size_t n = 0;
        for (int r = 0; r < reps; r++) {
            const auto t0 = std::chrono::steady_clock::now();
            n = tokenize(vocab, text, true, true).size();
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (s < best) {
                best = s;
            }
        }
        printf("tokens %zu best_seconds %.6f\n", n, best);
    } else {
        fprintf(stderr, "bad arguments\n");
        return 1;
    }
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
