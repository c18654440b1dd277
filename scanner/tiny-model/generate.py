#!/usr/bin/python3
"""Writes a tiny prompt-injection classifier in the Hugging Face hub layout transformers.js loads.

Run with Debian's interpreter and its python3-onnx package (apt-get install python3-onnx):

    /usr/bin/python3 scanner/tiny-model/generate.py [OUTPUT_DIR]

OUTPUT_DIR defaults to scanner/tiny-model/local/tiny-prompt-injection (the committed copy). It receives:

- config.json            model_type bert, id2label {0: SAFE, 1: INJECTION}, max_position_embeddings 512
- tokenizer.json         a WordPiece tokenizer (BERT normalizer and pre-tokenizer, [CLS] $A [SEP] template)
- tokenizer_config.json  model_max_length 512
- onnx/model.onnx        fp32 graph: inputs input_ids and attention_mask (int64 [batch, sequence]),
                         output logits (float32 [batch, 2])

The graph is an embedding mean followed by a linear layer. Every token has one feature: its injection
weight (WEIGHT for the words in INJECTION_WORDS, 0 for every other token). The masked mean of that
feature over the sequence, f, gives logits [0, f - BIAS], so P(INJECTION) = sigmoid(f - BIAS). With
WEIGHT = 512 and BIAS = 2, a full 512-token window needs three injection words to pass 0.5 ("ignore
previous instructions" does), one alone stays below; a short text with one is flagged. It is a toy that
exercises the scanner's loading, windowing and scoring code, not a detector.

The output is deterministic: running the script again gives byte-identical files.
"""

import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WEIGHT = 512.0
BIAS = 2.0
MAX_LENGTH = 512

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

INJECTION_WORDS = [
    "ignore", "previous", "instructions", "disregard", "prior", "forget", "override", "bypass",
    "reveal", "system", "prompt", "jailbreak", "pretend", "unrestricted", "developer", "mode",
]

BENIGN_WORDS = """
a about above after again all also am an and any are as at be because been before being below between
both but by can could day did do does doing down during each email few find for from further get give
good had has have he her here hers him his how i if in into is it its just know like make me meeting
more most my no nor not now of off on once only or other our ours out over own please project
question report same she should so some summary such team than thank thanks that the their them then
there these they this those through time to today too tomorrow under until up very want was we weather
week were what when where which while who whom why will with would write you your yours
""".split()

PUNCTUATION = [".", ",", "!", "?", "'", ":", ";", "-", "(", ")"]

SUBWORDS = ["##s", "##ed", "##ing", "##ly", "##er"]


def vocabulary():
    """Token -> id: the special tokens, the injection words, then benign words, punctuation and subwords."""
    benign = sorted(set(BENIGN_WORDS) - set(INJECTION_WORDS))
    tokens = SPECIAL_TOKENS + INJECTION_WORDS + benign + PUNCTUATION + SUBWORDS
    return {token: index for index, token in enumerate(tokens)}


def tokenizer_json(vocab):
    special = lambda token: {  # noqa: E731
        "id": vocab[token], "content": token, "single_word": False, "lstrip": False, "rstrip": False,
        "normalized": False, "special": True,
    }
    template_token = lambda token: {"id": token, "ids": [vocab[token]], "tokens": [token]}  # noqa: E731
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [special(token) for token in SPECIAL_TOKENS],
        "normalizer": {
            "type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
            "strip_accents": None, "lowercase": True,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 1}},
            ],
            "special_tokens": {"[CLS]": template_token("[CLS]"), "[SEP]": template_token("[SEP]")},
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": vocab,
        },
    }


def tokenizer_config():
    return {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": True,
        "model_max_length": MAX_LENGTH,
        "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
        "mask_token": "[MASK]",
    }


def model_config(vocab):
    return {
        "model_type": "bert",
        "architectures": ["BertForSequenceClassification"],
        "id2label": {"0": "SAFE", "1": "INJECTION"},
        "label2id": {"SAFE": 0, "INJECTION": 1},
        "vocab_size": len(vocab),
        "hidden_size": 1,
        "max_position_embeddings": MAX_LENGTH,
        "pad_token_id": vocab["[PAD]"],
    }


def onnx_model(vocab):
    embedding = np.zeros((len(vocab), 1), dtype=np.float32)
    for word in INJECTION_WORDS:
        embedding[vocab[word], 0] = WEIGHT
    # logits = f @ [[0, 1]] + [0, -BIAS]
    weight = np.array([[0.0, 1.0]], dtype=np.float32)
    bias = np.array([0.0, -BIAS], dtype=np.float32)

    nodes = [
        helper.make_node("Gather", ["embedding", "input_ids"], ["token_features"], axis=0),  # [b, s, 1]
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),  # [b, s]
        helper.make_node("Unsqueeze", ["mask", "last_axis"], ["mask3"]),  # [b, s, 1]
        helper.make_node("Mul", ["token_features", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "sequence_axis"], ["feature_sum"], keepdims=0),  # [b, 1]
        helper.make_node("ReduceSum", ["mask3", "sequence_axis"], ["token_count"], keepdims=0),  # [b, 1]
        helper.make_node("Max", ["token_count", "one"], ["safe_count"]),
        helper.make_node("Div", ["feature_sum", "safe_count"], ["mean"]),  # [b, 1]
        helper.make_node("MatMul", ["mean", "weight"], ["projected"]),  # [b, 2]
        helper.make_node("Add", ["projected", "bias"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_prompt_injection",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
            helper.make_tensor_value_info(
                "attention_mask", TensorProto.INT64, ["batch_size", "sequence_length"]
            ),
        ],
        outputs=[helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", 2])],
        initializer=[
            numpy_helper.from_array(embedding, "embedding"),
            numpy_helper.from_array(weight, "weight"),
            numpy_helper.from_array(bias, "bias"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "last_axis"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "sequence_axis"),
            numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        ],
    )
    model = helper.make_model(
        graph, producer_name="tiny-model/generate.py", opset_imports=[helper.make_opsetid("", 13)]
    )
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)
    return model


def write_json(path, value):
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        json.dump(value, out, indent=2, sort_keys=True)
        out.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "local", "tiny-prompt-injection")
    os.makedirs(os.path.join(target, "onnx"), exist_ok=True)
    vocab = vocabulary()
    write_json(os.path.join(target, "config.json"), model_config(vocab))
    write_json(os.path.join(target, "tokenizer.json"), tokenizer_json(vocab))
    write_json(os.path.join(target, "tokenizer_config.json"), tokenizer_config())
    with open(os.path.join(target, "onnx", "model.onnx"), "wb") as out:
        out.write(onnx_model(vocab).SerializeToString())
    print(f"wrote {target} ({len(vocab)} tokens)")


if __name__ == "__main__":
    main()
