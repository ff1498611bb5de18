//! A template's family as llama.cpp 0.3.16 names it: `llm_chat_detect_template`
//! (`src/llama-chat.cpp`), the substring tests llama.cpp uses to pick its built-in formatter when
//! it does not run the template as Jinja. `scripts/check-templates.sh` compares this port with
//! llama.cpp's own function on every reference template.

/// The name llama.cpp gives the template's family (`chatml`, `llama3`, `phi3`, …; the keys of
/// its `LLM_CHAT_TEMPLATES`), or `unknown`.
pub fn family(tmpl: &str) -> &'static str {
    if let Some(name) = BUILTIN.iter().find(|n| **n == tmpl) {
        return name;
    }
    let has = |s: &str| tmpl.contains(s);
    if has("<|im_start|>") {
        return if has("<|im_sep|>") {
            "phi4"
        } else if has("<end_of_utterance>") {
            "smolvlm"
        } else {
            "chatml"
        };
    }
    if tmpl.starts_with("mistral") || has("[INST]") {
        if has("[SYSTEM_PROMPT]") {
            return "mistral-v7";
        }
        if has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]") {
            return if has(" [INST]") {
                "mistral-v1"
            } else if has("\"[INST]\"") {
                "mistral-v3-tekken"
            } else {
                "mistral-v3"
            };
        }
        return if has("content.strip()") {
            "llama2-sys-strip"
        } else if has("bos_token + '[INST]") {
            "llama2-sys-bos"
        } else if has("<<SYS>>") {
            "llama2-sys"
        } else {
            "llama2"
        };
    }
    let rules: [(&[&str], &'static str); 34] = [
        (&["<|assistant|>", "<|end|>"], "phi3"),
        (&["[gMASK]<sop>"], "chatglm4"),
        (&["<|assistant|>", "<|user|>", "</s>"], "falcon3"),
        (&["<|assistant|>", "<|user|>"], "glmedge"),
        (&["<|{{ item['role'] }}|>", "<|begin_of_image|>"], "glmedge"),
        (&["<|user|>", "<|endoftext|>"], "zephyr"),
        (&["bos_token + message['role']"], "monarch"),
        (&["<start_of_turn>"], "gemma"),
        (&["'\\n\\nAssistant: ' + eos_token"], "orion"),
        (&["GPT4 Correct "], "openchat"),
        (&["USER: ", "ASSISTANT: ", "SYSTEM: "], "vicuna-orca"),
        (&["USER: ", "ASSISTANT: "], "vicuna"),
        (&["### Instruction:", "<|EOT|>"], "deepseek"),
        (&["<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>"], "command-r"),
        (&["<|start_header_id|>", "<|end_header_id|>"], "llama3"),
        (&["[gMASK]sop"], "chatglm3"),
        (&["<用户>"], "minicpm"),
        (&["'Assistant: ' + message['content'] + eos_token"], "deepseek2"),
        (&["<｜Assistant｜>", "<｜User｜>", "<｜end▁of▁sentence｜>"], "deepseek3"),
        (&["[|system|]", "[|assistant|]", "[|endofturn|]", "[|tool|]"], "exaone4"),
        (&["[|system|]", "[|assistant|]", "[|endofturn|]"], "exaone3"),
        (&["rwkv-world"], "rwkv-world"),
        (&["{{- 'User: ' + message['content']|trim + '\\n\\n' -}}"], "rwkv-world"),
        (&["<|start_of_role|>"], "granite"),
        (&["message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]"], "gigachat"),
        (&["<|role_start|>"], "megrez"),
        (&[" Ассистент:"], "yandex"),
        (&["<role>ASSISTANT</role>", "'HUMAN'"], "bailing"),
        (&["<|header_start|>", "<|header_end|>"], "llama4"),
        (&["<|endofuserprompt|>"], "dots1"),
        (&["<|extra_0|>", "<|extra_4|>"], "hunyuan-moe"),
        (&["<|start|>", "<|channel|>"], "gpt-oss"),
        (&["<｜hy_Assistant｜>", "<｜hy_place▁holder▁no▁3｜>"], "hunyuan-dense"),
        (&["<|im_assistant|>assistant<|im_middle|>"], "kimi-k2"),
    ];
    for (needles, name) in rules {
        if needles.iter().all(|n| has(n)) {
            return name;
        }
    }
    "unknown"
}

/// The names of llama.cpp's built-in formats; a template that is one of them is that format.
const BUILTIN: [&str; 43] = [
    "chatml",
    "llama2",
    "llama2-sys",
    "llama2-sys-bos",
    "llama2-sys-strip",
    "mistral-v1",
    "mistral-v3",
    "mistral-v3-tekken",
    "mistral-v7",
    "mistral-v7-tekken",
    "phi3",
    "phi4",
    "falcon3",
    "zephyr",
    "monarch",
    "gemma",
    "orion",
    "openchat",
    "vicuna",
    "vicuna-orca",
    "deepseek",
    "deepseek2",
    "deepseek3",
    "command-r",
    "llama3",
    "chatglm3",
    "chatglm4",
    "glmedge",
    "minicpm",
    "exaone3",
    "exaone4",
    "rwkv-world",
    "granite",
    "gigachat",
    "megrez",
    "yandex",
    "bailing",
    "llama4",
    "smolvlm",
    "hunyuan-moe",
    "gpt-oss",
    "hunyuan-dense",
    "kimi-k2",
];

#[cfg(test)]
mod tests {
    use super::family;

    #[test]
    fn families() {
        assert_eq!(family("{{'<|im_start|>' + m}}"), "chatml");
        assert_eq!(family("llama3"), "llama3");
        assert_eq!(family("<|user|>x<|assistant|>y</s>"), "falcon3");
        assert_eq!(family("<|user|>x<|assistant|>y"), "glmedge");
        assert_eq!(family("USER: a ASSISTANT: b"), "vicuna");
        assert_eq!(family("plain"), "unknown");
    }
}
