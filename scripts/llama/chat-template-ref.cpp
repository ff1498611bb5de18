// llama.cpp's chat-template renderer as a reference for scripts/check-templates.sh:
// common_chat_templates_init + common_chat_templates_apply with use_jinja = true, for every
// template x conversation of a cases file (scripts/template_reference.py cases).
//
// Usage: chat-template-ref CASES.json OUT.json
//
// A template from a GGUF file is read by llama.cpp itself (the model loaded vocab-only), with
// the bos/eos tokens of its vocabulary; a .jinja template is passed as the override with the
// case's bos/eos. Messages are given in OpenAI's form, as llama-server takes them: a tool
// call's arguments as a JSON string. The template is first parsed alone (0.3.16: minja, whose
// failure common_chat_templates_init hides by falling back to chatml; 0.3.36: its own jinja
// engine through common_chat_template, which common_chat_templates_init rethrows from), so a
// syntax error is told from a runtime one.
// Each template's family is what llm_chat_detect_template (src/llama-chat.h) names it.

#include "chat.h"
#include "llama-chat.h"
#include "llama.h"
#include "log.h"
#include <nlohmann/json.hpp>

// LLAMA_CPP_RELEASE is set by build-program.sh (316, 336).
#if LLAMA_CPP_RELEASE >= 336
using template_parser = common_chat_template;
#else
#include <minja/chat-template.hpp>
using template_parser = minja::chat_template;
#endif

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

using json = nlohmann::ordered_json;

static json openai_messages(json messages) {
    for (auto & m : messages) {
        if (!m.contains("tool_calls")) continue;
        for (auto & tc : m["tool_calls"]) {
            auto & args = tc["function"]["arguments"];
            if (!args.is_string()) args = args.dump();
        }
    }
    return messages;
}

// The name of a built-in format, as llama_chat_builtin_templates lists them.
static std::string family_name(llm_chat_template t) {
    std::vector<const char *> names(128);
    int32_t n = llama_chat_builtin_templates(names.data(), names.size());
    for (int32_t i = 0; i < n && i < (int32_t) names.size(); i++) {
        if (llm_chat_template_from_str(names[i]) == t) return names[i];
    }
    return "unknown";
}

int main(int argc, char ** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CASES.json OUT.json\n", argv[0]);
        return 2;
    }
    common_log_set_verbosity_thold(-1);
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    std::ifstream in(argv[1]);
    json cases = json::parse(in);
    auto now = std::chrono::system_clock::from_time_t(cases["now_epoch"].get<long long>());
    json results = json::object();
    json families = json::object();
    llama_backend_init();
    for (const auto & t : cases["templates"]) {
        std::string id = t["id"];
        llama_model * model = nullptr;
        std::string source = t["source"];
        std::string bos, eos, parse_error;
        if (t["gguf"].is_string()) {
            auto mp = llama_model_default_params();
            mp.vocab_only = true;
            model = llama_model_load_from_file(t["gguf"].get<std::string>().c_str(), mp);
            if (!model) {
                fprintf(stderr, "%s: llama.cpp could not load the file\n", id.c_str());
                return 1;
            }
            const char * name = t["name"].is_string() ? t["name"].get_ref<const std::string &>().c_str() : nullptr;
            const char * src = llama_model_chat_template(model, name);
            if (!src || source != src) {
                fprintf(stderr, "%s: llama.cpp reads a different template than gguf-py\n", id.c_str());
                return 1;
            }
        } else {
            bos = t["special"].value("bos_token", "");
            eos = t["special"].value("eos_token", "");
        }
        families[id] = family_name(llm_chat_detect_template(source));
        try {
            template_parser check(source, bos, eos);
        } catch (const std::exception & e) {
            parse_error = std::string("syntax: ") + e.what();
        }
        // The default template of a file is read from the file, a named one is the override.
        std::string override_src = model && t["name"].is_null() ? "" : source;
        auto tmpls = common_chat_templates_init(model, override_src, bos, eos);
        for (const auto & c : cases["conversations"]) {
            std::string key = id + "|" + c["id"].get<std::string>();
            if (!parse_error.empty()) {
                results[key] = {{"error", parse_error}};
                continue;
            }
            try {
                common_chat_templates_inputs inputs;
                inputs.messages = common_chat_msgs_parse_oaicompat(openai_messages(c["messages"]));
                if (c.contains("tools") && !c["tools"].is_null()) {
                    inputs.tools = common_chat_tools_parse_oaicompat(c["tools"]);
                }
                inputs.use_jinja = true;
                inputs.add_generation_prompt = c["add_generation_prompt"];
                inputs.now = now;
                auto params = common_chat_templates_apply(tmpls.get(), inputs);
                results[key] = {{"ok", params.prompt}, {"format", common_chat_format_name(params.format)}};
            } catch (const std::exception & e) {
                results[key] = {{"error", std::string("runtime: ") + e.what()}};
            }
        }
        if (model) llama_model_free(model);
    }
    std::ofstream out(argv[2]);
    out << json{{"results", results}, {"families", families}}.dump(1, ' ', false, json::error_handler_t::replace);
    return 0;
}
