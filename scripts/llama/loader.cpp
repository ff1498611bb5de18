// loader: llama.cpp as an executed reference. For each model path on the command line, a
// child process loads the model as llama.cpp does (llama_model_load_from_file, default model
// parameters, CPU only), and for a model that loads, tokenizes a fixed string and runs it: a
// short greedy decode, or, for an encoder-only model, its embeddings. The parent prints one
// JSON line per model:
//
//   {"file", "verdict", "stage", "error", "arch", "n_vocab", "prompt", "prompt_text",
//    "roundtrip", "generated", "embd"}
//
// verdict: "ok", "load-error" (llama_model_load_from_file returned NULL), "context-error",
// "tokenize-error", "decode-error", "embed-error" (no embeddings, or one not finite),
// "crash: SIG..." (the child died, e.g. in GGML_ABORT), "crash: exception" (a C++ exception
// escaped llama.cpp's C API) or "timeout". stage: where the child was ("load", "context",
// "tokenize", "decode", "embed", "done"). error: llama.cpp's own first error line (its log
// callback at error level, the GGML_ABORT message, or the exception's what()), null when there
// is none. prompt: the token ids of the fixed string (with the special tokens llama.cpp adds);
// prompt_text: their pieces joined (newlines as spaces); roundtrip: whether llama_detokenize
// gives the fixed string back (after one leading space) or, for the WordPiece and Unigram
// tokenizers, whose normalisation is lossy (WPM lower-cases, drops newlines and keeps the space
// it puts before ':'), text that tokenizes to the same ids again, with no unknown token;
// generated: the greedy tokens.
//
// An encoder-only model (one without a decoder, t5encoder, or whose `{arch}.attention.causal`
// is false: the BERT family, whose graphs have no output head) runs as llama.cpp's embedding
// example runs it: a context with embeddings on and the model's pooling, llama_encode (a model
// with an encoder) or llama_decode of the prompt; embd is the number of embedding values read
// (the pooled vector of sequence 0, or every token's without pooling), each must be finite;
// generated is then null, and embd is null for a decoding model. An encoder-decoder model
// (t5) runs llama_encode of the prompt, then the greedy decode from its decoder start token.
//
// Usage: loader [--verbose] MODEL.gguf...   (--verbose: the child's llama.cpp log on stderr)

#include "ggml.h"
#include "llama.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

static const char * PROMPT = "Hello world, the model said: 42!\n";
static const int N_PREDICT = 4;
static const int TIMEOUT_SECONDS = 120;
// The child's address space: an allocation sized by a bogus count in a broken file fails at
// once (std::bad_alloc, a load-error) instead of zero-filling gigabytes, so that the verdict
// does not depend on the machine's memory.
static const rlim_t ADDRESS_SPACE = (rlim_t) 2 << 30;

static int g_out = -1;        // the pipe to the parent (in the child)
static bool g_verbose = false;
static std::string g_line;     // the log line being assembled
static int g_line_level = 0;

// One record to the parent: a tag letter, a colon, the text with newlines as spaces.
static void emit(char tag, const std::string & text) {
    std::string rec(1, tag);
    rec += ':';
    for (char c : text) {
        rec += (c == '\n' || c == '\r') ? ' ' : c;
    }
    rec += '\n';
    size_t off = 0;
    while (off < rec.size()) {
        ssize_t n = write(g_out, rec.data() + off, rec.size() - off);
        if (n <= 0) {
            return;
        }
        off += (size_t) n;
    }
}

static void on_log(ggml_log_level level, const char * text, void *) {
    if (g_verbose) {
        fputs(text, stderr);
    }
    if (level != GGML_LOG_LEVEL_CONT) {
        g_line_level = level;
    }
    g_line += text;
    size_t nl;
    while ((nl = g_line.find('\n')) != std::string::npos) {
        std::string line = g_line.substr(0, nl);
        g_line.erase(0, nl + 1);
        if (g_line_level == GGML_LOG_LEVEL_ERROR && !line.empty()) {
            emit('E', line);
        }
    }
}

// The abort message names a source file by its absolute path in the build machine's cache:
// keep it relative to the llama.cpp source tree, so that verdicts compare across machines.
#ifndef LLAMA_SRC_ROOT
#define LLAMA_SRC_ROOT ""
#endif

static void on_abort(const char * message) {
    std::string m = message;
    const std::string root = LLAMA_SRC_ROOT;
    if (!root.empty() && m.compare(0, root.size(), root) == 0) {
        m.erase(0, root.size());
    }
    emit('A', m);
}

static std::string piece(const llama_vocab * vocab, llama_token id) {
    char buf[256];
    int n = llama_token_to_piece(vocab, id, buf, sizeof(buf), 0, true);
    return n < 0 ? std::string() : std::string(buf, n);
}

static std::string ids(const std::vector<llama_token> & v) {
    std::string s;
    for (size_t i = 0; i < v.size(); i++) {
        s += (i ? "," : "") + std::to_string(v[i]);
    }
    return s;
}

// An encoder-only model: the prompt's embeddings, each finite. Returns the exit status.
static int embed(llama_model * model, llama_context * ctx, std::vector<llama_token> & prompt) {
    emit('S', "embed");
    llama_batch batch = llama_batch_get_one(prompt.data(), (int) prompt.size());
    if ((llama_model_has_encoder(model) ? llama_encode(ctx, batch) : llama_decode(ctx, batch)) != 0) {
        emit('V', "decode-error");
        return 0;
    }
    const enum llama_pooling_type pooling = llama_pooling_type(ctx);
    const float * values = nullptr;
    size_t n = 0;
    if (pooling == LLAMA_POOLING_TYPE_NONE) {
        values = llama_get_embeddings(ctx);
        n = prompt.size() * (size_t) llama_model_n_embd(model);
    } else {
        values = llama_get_embeddings_seq(ctx, 0);
        n = pooling == LLAMA_POOLING_TYPE_RANK ? llama_model_n_cls_out(model)
                                               : (size_t) llama_model_n_embd(model);
    }
    bool finite = values != nullptr;
    for (size_t i = 0; finite && i < n; i++) {
        finite = std::isfinite(values[i]);
    }
    if (!finite) {
        emit('V', "embed-error");
        return 0;
    }
    emit('B', std::to_string(n));
    emit('S', "done");
    emit('V', "ok");
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

// The child: everything llama.cpp does happens here. Returns the exit status.
static int child(const char * path) {
    llama_log_set(on_log, nullptr);
    ggml_set_abort_callback(on_abort);
    alarm(TIMEOUT_SECONDS);

    emit('S', "load");
    llama_model_params mparams = llama_model_default_params();
    mparams.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(path, mparams);
    if (model == nullptr) {
        emit('V', "load-error");
        return 0;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    char arch[128] = "";
    llama_model_meta_val_str(model, "general.architecture", arch, sizeof(arch));
    emit('M', arch);
    emit('N', std::to_string(llama_vocab_n_tokens(vocab)));

    emit('S', "tokenize");
    const int len = (int) strlen(PROMPT);
    int n_prompt = -llama_tokenize(vocab, PROMPT, len, nullptr, 0, true, false);
    std::vector<llama_token> prompt(n_prompt > 0 ? n_prompt : 0);
    if (n_prompt <= 0 ||
        llama_tokenize(vocab, PROMPT, len, prompt.data(), (int) prompt.size(), true, false) < 0) {
        emit('V', "tokenize-error");
        return 0;
    }
    emit('P', ids(prompt));
    std::string text;
    for (llama_token id : prompt) {
        text += piece(vocab, id);
    }
    emit('T', text);
    std::vector<char> detok(4 * (size_t) len + 64);
    int n_detok = llama_detokenize(vocab, prompt.data(), (int) prompt.size(), detok.data(),
                                   (int) detok.size(), true, false);
    // With its BOS removed, llama.cpp keeps the space SentencePiece put before the text.
    const std::string back = n_detok >= 0 ? std::string(detok.data(), n_detok) : "";
    bool roundtrip = back == PROMPT || back == std::string(" ") + PROMPT;
    const enum llama_vocab_type vtype = llama_vocab_type(vocab);
    if (!roundtrip && n_detok >= 0 && (vtype == LLAMA_VOCAB_TYPE_WPM || vtype == LLAMA_VOCAB_TYPE_UGM)) {
        std::vector<llama_token> again(prompt.size() + 16);
        int n_again = llama_tokenize(vocab, back.data(), (int) back.size(), again.data(),
                                     (int) again.size(), true, false);
        again.resize(n_again > 0 ? n_again : 0);
        bool unknown = false;
        for (llama_token id : prompt) {
            unknown = unknown || (llama_vocab_get_attr(vocab, id) & LLAMA_TOKEN_ATTR_UNKNOWN);
        }
        roundtrip = again == prompt && !unknown;
    }
    emit('R', roundtrip ? "true" : "false");

    emit('S', "context");
    llama_context_params cparams = llama_context_default_params();
    cparams.n_ctx = 64;
    cparams.n_batch = 64;
    cparams.n_ubatch = 64;
    cparams.n_threads = 1;
    cparams.n_threads_batch = 1;
    char causal[16] = "";
    const std::string causal_key = std::string(arch) + ".attention.causal";
    llama_model_meta_val_str(model, causal_key.c_str(), causal, sizeof(causal));
    const bool encoder_only = !llama_model_has_decoder(model) || strcmp(causal, "false") == 0;
    cparams.embeddings = encoder_only;
    llama_context * ctx = llama_init_from_model(model, cparams);
    if (ctx == nullptr) {
        emit('V', "context-error");
        return 0;
    }
    if (encoder_only) {
        return embed(model, ctx, prompt);
    }

    emit('S', "decode");
    std::vector<llama_token> generated;
    llama_batch batch = llama_batch_get_one(prompt.data(), (int) prompt.size());
    if (llama_model_has_encoder(model)) {
        if (llama_encode(ctx, batch) != 0) {
            emit('V', "decode-error");
            return 0;
        }
        llama_token start = llama_model_decoder_start_token(model);
        if (start == LLAMA_TOKEN_NULL) {
            start = llama_vocab_bos(vocab);
        }
        generated.push_back(start);
        batch = llama_batch_get_one(&generated.back(), 1);
    }
    llama_sampler * smpl = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(smpl, llama_sampler_init_greedy());
    std::vector<llama_token> out;
    llama_token next = 0;
    for (int i = 0; i < N_PREDICT; i++) {
        if (llama_decode(ctx, batch) != 0) {
            emit('V', "decode-error");
            return 0;
        }
        next = llama_sampler_sample(smpl, ctx, -1);
        out.push_back(next);
        batch = llama_batch_get_one(&next, 1);
    }
    emit('G', ids(out));
    emit('S', "done");
    emit('V', "ok");
    llama_sampler_free(smpl);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

static std::string json_string(const std::string & s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': o += "\\\""; break;
            case '\\': o += "\\\\"; break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    char buf[8];
                    snprintf(buf, sizeof(buf), "\\u%04x", c);
                    o += buf;
                } else {
                    o += (char) c;
                }
        }
    }
    // Invalid UTF-8 from a piece would make the line unreadable JSON: replace such bytes.
    std::string v;
    for (size_t i = 0; i < o.size();) {
        unsigned char c = o[i];
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = n > 0 && i + n <= o.size();
        for (size_t k = 1; ok && k < n; k++) {
            ok = ((unsigned char) o[i + k] >> 6) == 2;
        }
        if (ok) {
            v.append(o, i, n);
            i += n;
        } else {
            v += "\\ufffd";
            i += 1;
        }
    }
    return v + "\"";
}

static std::string or_null(const std::string & s, bool present) {
    return present ? json_string(s) : "null";
}

static const char * signal_name(int sig) {
    switch (sig) {
        case SIGABRT: return "SIGABRT";
        case SIGSEGV: return "SIGSEGV";
        case SIGFPE: return "SIGFPE";
        case SIGBUS: return "SIGBUS";
        case SIGILL: return "SIGILL";
        case SIGKILL: return "SIGKILL";
        default: return "signal";
    }
}

static void run(const char * path) {
    fflush(stdout);
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(2);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        close(fds[0]);
        struct rlimit limit = { ADDRESS_SPACE, ADDRESS_SPACE };
        setrlimit(RLIMIT_AS, &limit);
        g_out = fds[1];
        if (!g_verbose) {
            FILE * null = fopen("/dev/null", "w");
            if (null) {
                dup2(fileno(null), 1);
                dup2(fileno(null), 2);
            }
        }
        int status = 0;
        try {
            status = child(path);
        } catch (const std::exception & e) {
            emit('X', e.what());
        } catch (...) {
            emit('X', "unknown exception");
        }
        _exit(status);
    }
    close(fds[1]);
    std::string all;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0) {
        all.append(buf, (size_t) n);
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);

    std::string roundtrip = "null", verdict, stage, error, arch, n_vocab, prompt, text, generated, exception, embd;
    bool has_error = false, has_arch = false, has_prompt = false, has_gen = false, has_exc = false;
    bool has_abort = false;
    size_t start = 0;
    while (start < all.size()) {
        size_t nl = all.find('\n', start);
        if (nl == std::string::npos) {
            nl = all.size();
        }
        std::string rec = all.substr(start, nl - start);
        start = nl + 1;
        if (rec.size() < 2) {
            continue;
        }
        std::string v = rec.substr(2);
        switch (rec[0]) {
            case 'S': stage = v; break;
            case 'V': verdict = v; break;
            case 'M': arch = v; has_arch = true; break;
            case 'N': n_vocab = v; break;
            case 'P': prompt = v; has_prompt = true; break;
            case 'T': text = v; break;
            case 'R': roundtrip = v; break;
            case 'G': generated = v; has_gen = true; break;
            case 'B': embd = v; break;
            case 'X': exception = v; has_exc = true; break;
            case 'A':
                // The abort message is the reason of the crash: it wins over logged errors.
                if (!has_abort) {
                    error = v;
                    has_error = has_abort = true;
                }
                break;
            case 'E':
                if (!has_error) {
                    error = v;
                    has_error = true;
                }
                break;
        }
    }
    if (has_exc) {
        verdict = "crash: exception";
        if (!has_abort) {
            error = exception;
            has_error = true;
        }
    } else if (WIFSIGNALED(status)) {
        verdict = WTERMSIG(status) == SIGALRM ? "timeout"
                                              : std::string("crash: ") + signal_name(WTERMSIG(status));
    } else if (verdict.empty()) {
        verdict = "crash: exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    printf("{\"file\": %s, \"verdict\": %s, \"stage\": %s, \"error\": %s, \"arch\": %s, "
           "\"n_vocab\": %s, \"prompt\": %s, \"prompt_text\": %s, \"roundtrip\": %s, "
           "\"generated\": %s, \"embd\": %s}\n",
           json_string(path).c_str(), json_string(verdict).c_str(), json_string(stage).c_str(),
           or_null(error, has_error).c_str(), or_null(arch, has_arch).c_str(),
           n_vocab.empty() ? "null" : n_vocab.c_str(),
           has_prompt ? ("[" + prompt + "]").c_str() : "null",
           or_null(text, has_prompt).c_str(), roundtrip.c_str(), has_gen ? ("[" + generated + "]").c_str() : "null",
           embd.empty() ? "null" : embd.c_str());
    fflush(stdout);
}

int main(int argc, char ** argv) {
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--verbose") == 0) {
        g_verbose = true;
        first = 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: %s [--verbose] MODEL.gguf...\n", argv[0]);
        return 2;
    }
    llama_backend_init();
    for (int i = first; i < argc; i++) {
        run(argv[i]);
    }
    llama_backend_free();
    return 0;
}
