//! Builds whisper.cpp from the sources of whisper-rs-sys 0.15.0 (whisper.cpp 1.8.3, MIT) that
//! `scripts/setup-whisper-cpp` (run by `make setup`) unpacks, links it statically and generates
//! its bindings.
//!
//! Changes are made to those sources, in a copy under OUT_DIR. The first: the beam search
//! (temperature 0) extends each beam by its k most likely next tokens, as OpenAI's and
//! CTranslate2's do, and the temperature fallback (t > 0) samples each of its `best_of`
//! candidates on its own, as OpenAI's does. As released, `whisper_sample_token_topk` sorts the
//! top k and then ignores the sort: it draws the k candidates at random from the whole
//! distribution (`std::discrete_distribution`), even at temperature 0, so a clip's words depend
//! on a random generator's state, and on our bench the word error rate is higher (0.117 against
//! 0.111 on 123 clips). And at t > 0 it kept the beams' ranking over those draws, which keeps the
//! beam's repetition loops that the fallback is there to break (a Mandarin clip came out as
//! "4-4-4-4-…"). The others make it faster where timing its stages on five minutes of speech
//! found time lost: the beam search computes only the probabilities it reads and takes its
//! maxima in eight lanes ([`BEAM_SEARCH_READS_ONLY`], [`MAXIMA_IN_EIGHT_LANES`]), a call whose
//! language is known computes its logits on a 4-bit copy of the token embedding
//! ([`LOGITS_IN_4_BITS`]), the tokens near the top of each
//! row computed again in f16 ([`EXACT_NEAR_THE_TOP`]), DTW's graph runs on the transcription's
//! threads ([`DTW_GRAPH_ON_OUR_THREADS`]) and a batch computes the logits it asks for only
//! ([`LOGITS_ONLY_WHERE_ASKED`]). All but the 4-bit logits leave every word and time as it was.
//! The seventh seeds every call's random generators alike ([`EACH_CALL_SEEDED`]), so that a
//! piece's words do not depend on what its state transcribed before, the eighth reads the
//! 4-bit embedding once a step for five beams ([`FIVE_COLUMNS_IN_ONE_PASS`]), the ninth
//! stops a decoder caught in a repetition loop when the loop shows ([`LOOPS_STOP_EARLY`]), and
//! the tenth computes the encoder's attention one head at a time, so a state's buffer holds one
//! head's scores rather than all of them ([`ENCODER_HEADS_ONE_AT_A_TIME`]), and the eleventh
//! keeps DTW's pass from growing the logits by a row a token ([`DTW_PASS_ASKS_NO_LOGITS`]);
//! the twelfth sizes the self-attention cache for what a decode can hold
//! ([`KV_CACHE_FOR_WHAT_A_DECODE_HOLDS`]), and the thirteenth makes the encoder's padded
//! key/value copy only for flash attention ([`KV_PAD_FOR_FLASH_ATTENTION_ONLY`]); the
//! fourteenth has DTW read the heads' attention in place ([`DTW_READS_THE_HEADS_IN_PLACE`]).

use std::env;
use std::fs;
use std::path::Path;

use caption_build_support::{Change, build_key, built_once, change_file, fresh_copy, sources};

const VERSION: &str = "0.15.0";

/// The first change: (what the released source says, how many times, what it says here). A
/// different whisper.cpp fails the build instead of going unchanged.
const BEAM_SEARCH_TOP_K: [Change; 4] = [
    // Beam search: the i-th candidate is the i-th most likely token.
    (
        "    std::discrete_distribution<> dist(probs.begin(), probs.end());\n\n    for (int i = 0; i < k; ++i) {\n        const auto id = dist(decoder.rng);",
        1,
        "    for (int i = 0; i < k; ++i) {\n        const auto id = logits_id[i].second;",
    ),
    // The fallback temperatures decode as the greedy strategy does at t > 0: independent samples.
    (
        "            const float t_cur = temperatures[it];\n",
        1,
        "            const float t_cur = temperatures[it];\n            const auto strategy = t_cur > 0.0f ? WHISPER_SAMPLING_GREEDY : params.strategy;\n",
    ),
    (
        "if (params.strategy == whisper_sampling_strategy::WHISPER_SAMPLING_BEAM_SEARCH) {",
        2,
        "if (strategy == whisper_sampling_strategy::WHISPER_SAMPLING_BEAM_SEARCH) {",
    ),
    (
        "                            switch (params.strategy) {",
        1,
        "                            switch (strategy) {",
    ),
];

/// The second change: each step of the beam search computed the probability of every token of
/// the vocabulary for every beam (51,864 `expf`, 0.15 ms a beam on this machine's cores), but it
/// reads those of the timestamps and of its k picks only. Those are computed, with the same
/// expression, and nothing else; the greedy strategy and the temperature fallback, which read
/// them all, are unchanged. The words and their scores are identical.
const BEAM_SEARCH_READS_ONLY: [Change; 2] = [
    (
        "    // compute probs\n    whisper_compute_probs(logits, n_logits, logprobs, probs);\n",
        1,
        "    // compute probs: the beam search at temperature 0 reads those of the timestamps here\n\
    // and those of its k picks, computed as it picks them\n\
    if (params.strategy == WHISPER_SAMPLING_BEAM_SEARCH && !(temperature > 0.0f)) {\n\
        for (int i = vocab.token_beg; i < n_logits; ++i) {\n\
            probs[i] = logits[i] == -INFINITY ? 0.0f : expf(logprobs[i]);\n\
        }\n\
    } else {\n\
        whisper_compute_probs(logits, n_logits, logprobs, probs);\n\
    }\n",
    ),
    (
        "        result.push_back({ id, tid, probs[id], logprobs[id], pt, ptsum, -1, -1, -1, 0.0f, });",
        1,
        "        const float p = logits[id] == -INFINITY ? 0.0f : expf(logprobs[id]);\n\
        result.push_back({ id, tid, p, logprobs[id], pt, ptsum, -1, -1, -1, 0.0f, });",
    ),
];

/// Also in each step, the largest logit of each beam (51,864) and its largest text token's
/// log-probability (50,363) were found with `std::max_element`, one comparison after another
/// (0.07 ms each a beam on this machine). A maximum does not depend on the order it is taken
/// in, so eight running maxima that the compiler keeps in one vector register find the same
/// value about ten times faster.
const MAXIMA_IN_EIGHT_LANES: [Change; 3] = [
    (
        "static void whisper_compute_logprobs(\n",
        1,
        "// The largest of x[0..n) (-INFINITY for none), in eight lanes the compiler vectorises.\n\
static float whisper_max_of(const float * x, size_t n) {\n\
    float lane[8] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY };\n\
    size_t i = 0;\n\
    for (; i + 8 <= n; i += 8) {\n\
        for (int k = 0; k < 8; ++k) {\n\
            lane[k] = x[i + k] > lane[k] ? x[i + k] : lane[k];\n\
        }\n\
    }\n\
    float max = -INFINITY;\n\
    for (int k = 0; k < 8; ++k) {\n\
        max = lane[k] > max ? lane[k] : max;\n\
    }\n\
    for (; i < n; ++i) {\n\
        max = x[i] > max ? x[i] : max;\n\
    }\n\
    return max;\n\
}\n\
\n\
static void whisper_compute_logprobs(\n",
    ),
    (
        "    const float logit_max = *std::max_element(logits.begin(), logits.end());\n    float logsumexp = 0.0f;\n",
        1,
        "    const float logit_max = whisper_max_of(logits.data(), logits.size());\n    float logsumexp = 0.0f;\n",
    ),
    (
        "            const float max_text_token_logprob = *std::max_element(logprobs.begin(), logprobs.begin() + vocab.token_beg);",
        1,
        "            const float max_text_token_logprob = whisper_max_of(logprobs.data(), vocab.token_beg);",
    ),
];

/// The third change: the decoder's last product, its hidden state times the whole token
/// embedding (51,864 rows) for every token of every beam, reads a 4-bit copy of that matrix
/// (q4_0, made once when the model loads) rather than the f16 one, when the call's language is
/// known (every call of an English-only model; a multilingual model's once told or detected). That
/// product was the decoder's largest cost and bound by memory (5.2 s of 10.4 s on five minutes
/// of speech, tiny.en, 2 threads: 40 MB read per step); the rest of the model stays f16, and the
/// token lookup keeps the f16 rows. ggml quantizes the hidden state to 8 bits for that product
/// too: tiny.en heard as well with it (123 clips: 218 word errors against 216; five minutes:
/// 0.108 against 0.110), but multilingual base then heard espeak's Chinese as garbage. With the
/// tokens near the top computed again in f16 (the sixth change) every language takes it: on the
/// bench's 108 espeak-ng clips in six languages (base) 2 clips changed a word and no group's word
/// error rate or timing moved (German, French, Italian 0.83-0.88x the time), the Chinese and
/// Japanese tests pass, recorded Russian heard and timed as before (WER 0.175, 33.8 ms). Language
/// detection and translation keep the f16 product, and so do the fallback's
/// decodes at a raised temperature, which draw from the whole distribution (its tail is where
/// the 4-bit values differ; a sampled decode in `tests/beam_search.rs` came out other tokens with
/// them). The copy was q8_0
/// first; q4_0 halves what a step reads again (base on five minutes 26.6-27.2 s → 25.0-25.4 s,
/// tiny.en 2 % less), and with the sixth change the words and times are the same as f16's on the
/// bench's 123 clips and the five minutes, both models. It lives in the plain CPU buffer: in
/// ggml's repacking one (which takes tiny.en's 51,864 rows, a multiple of eight) it was no faster.
const LOGITS_IN_4_BITS: [Change; 9] = [
    (
        "    // decoder.token_embedding\n    struct ggml_tensor * d_te;\n",
        1,
        "    // decoder.token_embedding\n    struct ggml_tensor * d_te;\n    // the same in q4_0, for the logits of English (f16 models)\n    struct ggml_tensor * d_te_logits = nullptr;\n",
    ),
    (
        "        model.d_te = create_tensor(ASR_TENSOR_DEC_TOKEN_EMBD_WEIGHT, ASR_SYSTEM_DECODER, ggml_new_tensor_2d(ctx, wtype, n_text_state, n_vocab));\n",
        1,
        "        model.d_te = create_tensor(ASR_TENSOR_DEC_TOKEN_EMBD_WEIGHT, ASR_SYSTEM_DECODER, ggml_new_tensor_2d(ctx, wtype, n_text_state, n_vocab));\n\
        if (wtype == GGML_TYPE_F16 && n_text_state % ggml_blck_size(GGML_TYPE_Q4_0) == 0) {\n\
            ggml_tensor * meta = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, n_text_state, n_vocab);\n\
            model.d_te_logits = ggml_dup_tensor(get_ctx(ggml_backend_cpu_buffer_type()), meta);\n\
        }\n",
    ),
    (
        "    wctx.t_load_us = ggml_time_us() - t_start_us;\n",
        1,
        "    if (model.d_te_logits && model.n_loaded > 0) {\n\
        // Row blocks of the f16 matrix, widened and quantized with the CPU back end's SIMD code.\n\
        const int64_t n_row = model.d_te->ne[0];\n\
        const int64_t n_rows = model.d_te->ne[1];\n\
        const int64_t block = 1024;\n\
        const size_t q_row = ggml_row_size(GGML_TYPE_Q4_0, n_row);\n\
        const auto quantize = ggml_get_type_traits_cpu(GGML_TYPE_Q4_0)->from_float;\n\
        std::vector<ggml_fp16_t> f16(block * n_row);\n\
        std::vector<float> f32(block * n_row);\n\
        std::vector<char> q(block * q_row);\n\
        for (int64_t row = 0; row < n_rows; row += block) {\n\
            const int64_t rows = std::min(block, n_rows - row);\n\
            ggml_backend_tensor_get(model.d_te, f16.data(), row * model.d_te->nb[1], rows * model.d_te->nb[1]);\n\
            ggml_cpu_fp16_to_fp32(f16.data(), f32.data(), rows * n_row);\n\
            for (int64_t r = 0; r < rows; ++r) {\n\
                quantize(f32.data() + r * n_row, q.data() + r * q_row, n_row);\n\
            }\n\
            ggml_backend_tensor_set(model.d_te_logits, q.data(), row * q_row, rows * q_row);\n\
        }\n\
    }\n\
\n\
    wctx.t_load_us = ggml_time_us() - t_start_us;\n",
    ),
    (
        "#include \"ggml-backend.h\"\n",
        1,
        "#include \"ggml-backend.h\"\n#include \"ggml-cpu.h\"\n",
    ),
    (
        "    struct ggml_tensor * logits = ggml_mul_mat(ctx0, model.d_te, cur);",
        1,
        "    struct ggml_tensor * logits = ggml_mul_mat(ctx0, wstate.logits_4bit ? model.d_te_logits : model.d_te, cur);",
    ),
    (
        "    int lang_id = 0; // english by default\n",
        1,
        "    int lang_id = 0; // english by default\n\
    // whether this call's logits come from the 4-bit embedding: a call decoding English speech\n\
    bool logits_4bit = false;\n",
    ),
    // Off while the language is detected (its decode reads every language's probability).
    (
        "    // auto-detect language if not specified\n",
        1,
        "    state->logits_4bit = false;\n\n    // auto-detect language if not specified\n",
    ),
    (
        "    // first release distilled models require the \"no_timestamps\" token\n",
        1,
        "    const bool logits_4bit_known = ctx->model.d_te_logits != nullptr && state->lang_id >= 0 && !params.translate;\n    state->logits_4bit = logits_4bit_known;\n\n    // first release distilled models require the \"no_timestamps\" token\n",
    ),
    // A fallback at a raised temperature samples from the whole distribution, whose tail the
    // 4-bit product only approximates: those decodes take the f16 logits.
    (
        "            const auto strategy = t_cur > 0.0f ? WHISPER_SAMPLING_GREEDY : params.strategy;\n",
        1,
        "            const auto strategy = t_cur > 0.0f ? WHISPER_SAMPLING_GREEDY : params.strategy;\n            state->logits_4bit = logits_4bit_known && t_cur == 0.0f;\n",
    ),
];

/// The fourth change: DTW's graph (normalise, median filter, mean over the alignment heads)
/// ran on a CPU back end made for it with ggml's default thread count (4 on this machine's 2
/// cores: the extra threads spun at each barrier), and its median filter ran on one thread,
/// reading and writing each value through `ggml_get_f32_nd`/`ggml_set_f32_nd` and sorting each
/// window of 7. That graph took 0.97 s of five minutes' 1.8 s of DTW (tiny.en). It now runs
/// on the transcription's threads, the filter splits the rows among them, reads through the
/// strides and selects the median with `std::nth_element`: the same value for every element,
/// so the same word times.
const DTW_GRAPH_ON_OUR_THREADS: [Change; 4] = [
    (
        "static void median_filter(struct ggml_tensor * dst , const struct ggml_tensor * a, int ith, int /*nth*/, void * userdata) {\n    if (ith != 0) {\n        return;\n    }\n",
        1,
        "static void median_filter(struct ggml_tensor * dst , const struct ggml_tensor * a, int ith, int nth, void * userdata) {\n",
    ),
    (
        "    w = ggml_map_custom1(gctx, w, median_filter, 1, &mf_user_data);",
        1,
        "    w = ggml_map_custom1(gctx, w, median_filter, GGML_N_TASKS_MAX, &mf_user_data);",
    ),
    (
        "    ggml_backend_ptr backend { ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, nullptr) };\n    ggml_backend_graph_compute(backend.get(), gf);\n",
        1,
        "    ggml_backend_ptr backend { ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, nullptr) };\n    ggml_backend_cpu_set_n_threads(backend.get(), n_threads);\n    ggml_backend_graph_compute(backend.get(), gf);\n",
    ),
    (
        "    std::vector<float> filter;
    filter.reserve(filter_width);
    for (int64_t i = 0; i < a->ne[0]; ++i) {
        for (int64_t j = 0; j < a->ne[1]; ++j) {
            for (int64_t k = 0; k < a->ne[2]; ++k) {
                for (int64_t off = -filter_width/2; off <= filter_width/2; ++off) {
                    // \"reflect\" padding
                    int64_t idx = k + off;
                    if (idx < 0) {
                        idx = -idx;
                    } else if (idx >= a->ne[2]) {
                        idx = 2*(a->ne[2] - 1) - idx;
                    }

                    filter.push_back(whisper_get_f32_nd(a, i, j, idx, 0));
                }
                std::sort(filter.begin(), filter.end());
                const float v = filter[filter.size()/2];
                whisper_set_f32_nd(dst, i, j, k, 0, v);
                filter.clear();
            }
        }
    }
",
        1,
        "    // Each thread filters every nth row (i, j), reading through the strides (the input is a
    // permuted view); the median of a window is the same value whichever way it is selected.
    std::vector<float> filter(filter_width);
    const int64_t half = filter_width/2;
    const int64_t n_rows = a->ne[0]*a->ne[1];
    for (int64_t row = ith; row < n_rows; row += nth) {
        const int64_t i = row / a->ne[1];
        const int64_t j = row % a->ne[1];
        const char * src = (const char *) a->data + i*a->nb[0] + j*a->nb[1];
        char * out = (char *) dst->data + i*dst->nb[0] + j*dst->nb[1];
        for (int64_t k = 0; k < a->ne[2]; ++k) {
            for (int64_t off = -half; off <= half; ++off) {
                // \"reflect\" padding
                int64_t idx = k + off;
                if (idx < 0) {
                    idx = -idx;
                } else if (idx >= a->ne[2]) {
                    idx = 2*(a->ne[2] - 1) - idx;
                }
                filter[off + half] = *(const float *) (src + idx*a->nb[2]);
            }
            std::nth_element(filter.begin(), filter.begin() + half, filter.end());
            *(float *) (out + k*dst->nb[2]) = filter[half];
        }
    }
",
    ),
];

/// The fifth change: the decoder computed the logits of every token of its batch, then kept
/// those the batch asks for. Each window's first pass (the prompt) and DTW's pass over the
/// window's tokens ask for the last token's only, so their logits product multiplied up to a
/// few hundred hidden states by the whole token embedding and threw all but one row away
/// (about 0.5 s of DTW's 0.8 s pass on five minutes of speech). A batch that asks for the last
/// token's logits alone now computes that row alone (whisper.cpp's source has the line,
/// commented out); the beams' batches, which ask for every row, are unchanged. The graph that
/// sizes a state's buffers (the text context's 448 tokens, the last one asking) computes one
/// row too: its 448 rows of logits had been 93 MB of every state's 134 MB decoder buffer
/// (tiny.en), which no call needs (a beam step asks for five rows; the buffer grows if a call
/// ever needs more).
const LOGITS_ONLY_WHERE_ASKED: [Change; 2] = [
    (
        "    //cur = ggml_view_2d(ctx0, cur, cur->ne[0], 1, cur->nb[1], (cur->ne[1] - 1)*cur->nb[1]);\n",
        1,
        "    bool last_only = batch.n_tokens > 1;\n\
    for (int i = 0; last_only && i < batch.n_tokens - 1; ++i) {\n\
        last_only = batch.logits[i] == 0;\n\
    }\n\
    if (last_only) {\n\
        cur = ggml_view_2d(ctx0, cur, cur->ne[0], 1, cur->nb[1], (cur->ne[1] - 1)*cur->nb[1]);\n\
    }\n",
    ),
    (
        "        ggml_backend_tensor_get(logits, logits_out.data() + (n_vocab*i), sizeof(float)*(n_vocab*i), sizeof(float)*n_vocab);\n",
        1,
        "        // A batch that asked for the last token's logits alone computed that row alone.\n\
        const size_t row = logits->ne[1] == 1 ? 0 : i;\n\
        ggml_backend_tensor_get(logits, logits_out.data() + (n_vocab*i), sizeof(float)*(n_vocab*row), sizeof(float)*n_vocab);\n",
    ),
];

/// The sixth change, which makes the third's words the f16 product's again: the low-precision
/// logits are close (a few hundredths of a nat in 8 bits) but where two tokens are that close
/// the beam search took the other one (tiny.en lost "afternoon" to "after whom" and "and then
/// called" to "encalled" on the bench). So the decoder's last hidden state is kept beside the logits, and
/// every token whose 4-bit logit lies within ten nats of its row's largest is computed
/// again on the f16 embedding, with ggml's own f16 dot product (the hidden state rounded to f16
/// as ggml's f16 product rounds it). The beam search's picks all come from there: a token ten
/// nats under the best one has a 20,000th of its probability. The rest of the row keeps its
/// 4-bit value, which only enters the normalising sum.
const EXACT_NEAR_THE_TOP: [Change; 7] = [
    (
        "    // decode output (2-dimensional array: [n_tokens][n_vocab])\n    std::vector<float> logits;\n",
        1,
        "    // decode output (2-dimensional array: [n_tokens][n_vocab])\n    std::vector<float> logits;\n\
    // the decoder's last hidden state for each row of `logits` ([n_tokens][n_text_state]),\n\
    // kept when the logits come from the 4-bit embedding\n\
    std::vector<float> logits_hidden;\n",
    ),
    (
        "    // compute logits only for the last token\n",
        1,
        "    if (wstate.logits_4bit) {\n\
        ggml_set_name(cur, \"logits_in\");\n\
        ggml_set_output(cur);\n\
    }\n\
\n\
    // compute logits only for the last token\n",
    ),
    (
        "    struct ggml_tensor * logits;\n\n    // find KV slot for the batch\n",
        1,
        "    struct ggml_tensor * logits;\n\
    struct ggml_tensor * hidden = nullptr;\n\
\n\
    // find KV slot for the batch\n",
    ),
    (
        "        logits = ggml_graph_node(gf, -1);\n",
        1,
        "        logits = ggml_graph_node(gf, -1);\n\
        hidden = wstate.logits_4bit ? ggml_graph_get_tensor(gf, \"logits_in\") : nullptr;\n",
    ),
    (
        "        memcpy(logits.data(), state.logits.data() + decoder.i_batch*n_logits, n_logits*sizeof(float));\n",
        1,
        "        memcpy(logits.data(), state.logits.data() + decoder.i_batch*n_logits, n_logits*sizeof(float));\n\
        whisper_exact_near_the_top(ctx.model, state, decoder.i_batch, logits.data(), n_logits);\n",
    ),
    (
        "    if (batch.n_tokens > 1) {\n        //printf(\"%s: used_mem",
        1,
        "    if (hidden) {\n\
        const int64_t n_state = hidden->ne[0];\n\
        wstate.logits_hidden.resize(n_tokens*n_state);\n\
        for (int i = 0; i < n_tokens; i++) {\n\
            if (batch.logits[i] != 0) {\n\
                ggml_backend_tensor_get(hidden, wstate.logits_hidden.data() + n_state*i, hidden->nb[1]*i, sizeof(float)*n_state);\n\
            }\n\
        }\n\
    } else {\n\
        wstate.logits_hidden.clear();\n\
    }\n\
\n\
    if (batch.n_tokens > 1) {\n        //printf(\"%s: used_mem",
    ),
    (
        "static void whisper_process_logits(\n",
        1,
        "// Tokens whose 4-bit logit is within this many nats of the row's largest get their f16 one.\n\
static constexpr float WHISPER_EXACT_MARGIN = 10.0f;\n\
\n\
// Computes again, on the f16 token embedding, the logits of `row` near its top (see\n\
// `WHISPER_EXACT_MARGIN`), when they came from the 4-bit copy.\n\
static void whisper_exact_near_the_top(const whisper_model & model, const whisper_state & state, int row, float * logits, int n_logits) {\n\
    const int64_t n_state = model.d_te->ne[0];\n\
    if (!model.d_te_logits || state.logits_hidden.size() < (size_t) (row + 1)*n_state ||\n\
        !ggml_backend_buffer_is_host(model.d_te->buffer) || model.d_te->type != GGML_TYPE_F16) {\n\
        return;\n\
    }\n\
    std::vector<ggml_fp16_t> hidden(n_state);\n\
    ggml_cpu_fp32_to_fp16(state.logits_hidden.data() + row*n_state, hidden.data(), n_state);\n\
    const auto vec_dot = ggml_get_type_traits_cpu(GGML_TYPE_F16)->vec_dot;\n\
    const char * rows = (const char *) model.d_te->data;\n\
    const float floor = whisper_max_of(logits, n_logits) - WHISPER_EXACT_MARGIN;\n\
    for (int i = 0; i < n_logits; ++i) {\n\
        if (logits[i] >= floor) {\n\
            vec_dot((int) n_state, &logits[i], 0, rows + i*model.d_te->nb[1], 0, hidden.data(), 0, 1);\n\
        }\n\
    }\n\
}\n\
\n\
static void whisper_process_logits(\n",
    ),
];

/// The seventh change: every call starts its decoders' random generators from the same seeds.
/// The ninth: a decoder caught in a repetition loop stops as soon as the loop shows, not at
/// the end of the text context. As released, a loop ("mâti mâti mâti …" on speech the model
/// cannot make out) runs on to 220 tokens, five beams wide, and only then fails whisper's own
/// test (the entropy of its last 32 tokens under `entropy_thold`), once at every fallback
/// temperature: a 4 s French clip took 5.3 s of one core with no fallback at all, against 1.7 s
/// for a clip that decodes. Here a decoder fails when its last 64 tokens fall under the same
/// threshold. Twice whisper's window, so a chorus of a few repeated words that ends in other
/// words, which whisper's end-of-decoding test passes, is not stopped; a loop has the entropy
/// of its period (a three-token loop 1.1 against a threshold of 2.4, a sentence of 64 tokens
/// 3.5 or more) in any window, so what fails here fails there, only later.
const LOOPS_STOP_EARLY: [Change; 2] = [
    (
        "static void whisper_sequence_score(\n",
        1,
        "// The entropy of the counts of the last n tokens of `tokens` (0 when it holds fewer).\n\
static double whisper_tail_entropy(const std::vector<whisper_token_data> & tokens, int n) {\n\
    if ((int) tokens.size() < n) {\n\
        return 0.0;\n\
    }\n\
    std::vector<whisper_token> ids;\n\
    ids.reserve(n);\n\
    for (size_t i = tokens.size() - n; i < tokens.size(); ++i) {\n\
        ids.push_back(tokens[i].id);\n\
    }\n\
    std::sort(ids.begin(), ids.end());\n\
    double entropy = 0.0;\n\
    for (size_t i = 0; i < ids.size();) {\n\
        size_t j = i;\n\
        while (j < ids.size() && ids[j] == ids[i]) {\n\
            ++j;\n\
        }\n\
        const double p = double(j - i) / n;\n\
        entropy -= p * log(p);\n\
        i = j;\n\
    }\n\
    return entropy;\n\
}\n\
\n\
static void whisper_sequence_score(\n",
    ),
    (
        "                    if (i == n_max - 1 && (result_len == 0 || seek_delta < 100*WHISPER_CHUNK_SIZE/2)) {\n",
        1,
        concat!(
            "                    // a loop shows in its last 64 tokens: fail now rather than at n_max\n",
            "                    if (params.entropy_thold > 0.0f && (int) decoder.sequence.tokens.size() >= 64 &&\n",
            "                        whisper_tail_entropy(decoder.sequence.tokens, 64) < params.entropy_thold) {\n",
            "                        failed = true;\n",
            "                        continue;\n",
            "                    }\n",
            "\n",
            "                    if (i == n_max - 1 && (result_len == 0 || seek_delta < 100*WHISPER_CHUNK_SIZE/2)) {\n",
        ),
    ),
];

/// whisper.cpp seeds decoders 1 to n at each call but the first only when the state is made, so
/// a piece sampled at a raised temperature (the fallback) got words that depended on what the
/// state had transcribed before. Seeded at each call, a piece's words are its own whatever ran
/// before it on that state, and pieces can run on several states at once.
const EACH_CALL_SEEDED: [Change; 1] = [(
    "    // TAGS: WHISPER_DECODER_INIT\n    for (int j = 1; j < n_decoders; j++) {",
    1,
    "    // TAGS: WHISPER_DECODER_INIT\n    state->decoders[0].rng = std::mt19937(0);\n    for (int j = 1; j < n_decoders; j++) {",
)];

/// The eighth change, in ggml's tiled kernels (llamafile's tinyBLAS): the low-precision logits
/// product of a five-beam search (then the q8_0 token embedding, 51,864 rows, times five hidden
/// states) was cut into a tile of four columns and one of one, so the 20 MB matrix was read
/// twice a step, and the one-column pass cost 0.6 of the four-column one. With 32 vector
/// registers (AVX-512) a tile of four rows and five columns fits, and the matrix is read once;
/// each value is the same sum in the same order.
const FIVE_COLUMNS_IN_ONE_PASS: [Change; 1] = [(
    "    void mnpack(int64_t m0, int64_t m, int64_t n0, int64_t n) {\n        int64_t mc, nc, mp, np;\n        switch ((MIN(m - m0, 4) << 4) | MIN(n - n0, 4)) {\n#if VECTOR_REGISTERS == 32\n        case 0x44:\n            mc = 4;\n            nc = 4;\n#if defined(__AVX2__) && defined(__F16C__)\n            gemm4xN<4>(m0, m, n0, n);",
    1,
    "    void mnpack(int64_t m0, int64_t m, int64_t n0, int64_t n) {\n        int64_t mc, nc, mp, np;\n#if VECTOR_REGISTERS == 32 && defined(__AVX2__) && defined(__F16C__)\n        // Five columns (a five-beam search) in one pass over A, not four and then one.\n        if (m - m0 >= 4 && n - n0 == 5) {\n            gemm4xN<5>(m0, m, n0, n);\n            mp = m0 + (m - m0) / 4 * 4;\n            mnpack(mp, m, n0, n);\n            return;\n        }\n#endif\n        switch ((MIN(m - m0, 4) << 4) | MIN(n - n0, 4)) {\n#if VECTOR_REGISTERS == 32\n        case 0x44:\n            mc = 4;\n            nc = 4;\n#if defined(__AVX2__) && defined(__F16C__)\n            gemm4xN<4>(m0, m, n0, n);",
)];

/// The tenth change: the encoder's attention, one head at a time. whisper.cpp multiplied the
/// keys by the queries of every head at once, so the encoder's buffer held every head's scores
/// (n_ctx × n_ctx floats a head: 54 of a state's 65 MB with tiny.en's six heads, 72 of 86 MB
/// with base's eight), and each piece decoded side by side holds a state. Each head's scores,
/// softmax and weighted values are now their own nodes, the heads' results joined in order:
/// ggml frees a head's scores before the next head's are made. Each value is the same sum in
/// the same order (ggml multiplies a batch of heads one head at a time).
const ENCODER_HEADS_ONE_AT_A_TIME: [Change; 1] = [(
    "                // K * Q\n                struct ggml_tensor * KQ = ggml_mul_mat(ctx0, K, Q);\n\n                struct ggml_tensor * KQ_soft_max = ggml_soft_max_ext(ctx0, KQ, nullptr, KQscale, 0.0f);\n\n                struct ggml_tensor * V =\n                    ggml_cast(ctx0,\n                            ggml_permute(ctx0,\n                                ggml_reshape_3d(ctx0,\n                                    Vcur,\n                                    n_state_head, n_head, n_ctx),\n                                1, 2, 0, 3),\n                            wctx.itype);\n\n                struct ggml_tensor * KQV = ggml_mul_mat(ctx0, V, KQ_soft_max);\n",
    1,
    "                struct ggml_tensor * V =\n                    ggml_cast(ctx0,\n                            ggml_permute(ctx0,\n                                ggml_reshape_3d(ctx0,\n                                    Vcur,\n                                    n_state_head, n_head, n_ctx),\n                                1, 2, 0, 3),\n                            wctx.itype);\n\n                // One head at a time: a head's scores are freed before the next head's are made.\n                struct ggml_tensor * KQV = nullptr;\n                for (int h = 0; h < n_head; ++h) {\n                    struct ggml_tensor * K_h = ggml_view_3d(ctx0, K, K->ne[0], K->ne[1], 1, K->nb[1], K->nb[2], h*K->nb[2]);\n                    struct ggml_tensor * Q_h = ggml_view_3d(ctx0, Q, Q->ne[0], Q->ne[1], 1, Q->nb[1], Q->nb[2], h*Q->nb[2]);\n                    struct ggml_tensor * V_h = ggml_view_3d(ctx0, V, V->ne[0], V->ne[1], 1, V->nb[1], V->nb[2], h*V->nb[2]);\n                    struct ggml_tensor * KQ = ggml_mul_mat(ctx0, K_h, Q_h);\n                    struct ggml_tensor * KQ_soft_max = ggml_soft_max_ext(ctx0, KQ, nullptr, KQscale, 0.0f);\n                    struct ggml_tensor * KQV_h = ggml_mul_mat(ctx0, V_h, KQ_soft_max);\n                    KQV = KQV ? ggml_concat(ctx0, KQV, KQV_h, 2) : KQV_h;\n                }\n",
)];

/// The eleventh change: DTW's pass over a window's tokens asks for no logits. It reads the
/// alignment heads' cross-attention only, but its batch asked for the last token's logits, and
/// the decoder grew the state's logits vector to the batch's tokens first: a zero-filled row
/// of 207 KB for every token of the window (up to 448), every row of it resident from then on
/// although only the last was written, and none was read. A batch that asks for no row now
/// leaves the vector as it was.
const DTW_PASS_ASKS_NO_LOGITS: [Change; 2] = [
    (
        "    whisper_batch_prep_legacy(state->batch, tokens.data(), tokens.size(), 0, 0);\n    whisper_kv_cache_seq_rm(state->kv_self, 0, 0, -1);\n",
        1,
        "    whisper_batch_prep_legacy(state->batch, tokens.data(), tokens.size(), 0, 0);\n    // The cross-attention is read, not the logits.\n    state->batch.logits[tokens.size() - 1] = 0;\n    whisper_kv_cache_seq_rm(state->kv_self, 0, 0, -1);\n",
    ),
    (
        "    logits_out.resize(n_tokens*n_vocab);\n",
        1,
        "    // A batch that asks for no row leaves the logits as they were (growing the vector to its\n    // tokens would zero-fill rows nobody reads).\n    bool asked = false;\n    for (int i = 0; i < n_tokens; i++) {\n        asked = asked || batch.logits[i] != 0;\n    }\n    if (asked) {\n        logits_out.resize(n_tokens*n_vocab);\n    }\n",
    ),
];

/// The twelfth change: a state's self-attention cache holds the cells a decode can use, not
/// twice that and more. For a search of n decoders (beams, or the fallback's candidates)
/// whisper.cpp made it `n + 2` times the text context (3,584 cells for five beams: 22 MB a state
/// with tiny.en, 44 MB with base), "to work around fragmentation", and zeroed all of it at every
/// decode, so every page was resident. A decode places its prompt (at most half the text context
/// and the task tokens) and then, each step, one cell a decoder, for at most half the text
/// context's steps; each batch goes into the first free run of cells, and the cells past the
/// highest one in use are all free, so the highest cell grows by at most a batch a step. Half the
/// text context and 8 cells, times the decoders and one, bound it (1,536 cells for five beams,
/// the 512 of one decoder as before). The attention reads the same cells in the same order:
/// every value is the same.
const KV_CACHE_FOR_WHAT_A_DECODE_HOLDS: [Change; 1] = [(
    "                    // overallocate to workaround KV cache fragmentation issues\n                    const int factor = n_decoders_cur > 1 ? n_decoders_cur + 2 : 1;\n\n                    if (!whisper_kv_cache_init(state->kv_self, state->backends[0], ctx->itype,\n                                ctx->model.hparams.n_text_state,\n                                ctx->model.hparams.n_text_layer,\n                                GGML_PAD(ctx->model.hparams.n_text_ctx, 256)*factor)) {",
    1,
    "                    // The most cells a decode holds: its prompt, then a cell a decoder a step.\n                    const int n_cells = std::max(\n                            GGML_PAD(ctx->model.hparams.n_text_ctx, 256),\n                            GGML_PAD((ctx->model.hparams.n_text_ctx/2 + 8)*(n_decoders_cur + 1), 256));\n\n                    if (!whisper_kv_cache_init(state->kv_self, state->backends[0], ctx->itype,\n                                ctx->model.hparams.n_text_state,\n                                ctx->model.hparams.n_text_layer,\n                                n_cells)) {",
)];

/// The thirteenth change: the encoder's padded key/value copy (`kv_pad`, 2.4 MB a state with
/// tiny.en, 3.1 MB with base, zeroed when made, so resident) is read by the flash-attention
/// encoder only; without flash attention, which we do not turn on, it is not made.
const KV_PAD_FOR_FLASH_ATTENTION_ONLY: [Change; 3] = [
    (
        "    WHISPER_ASSERT(!!kv_pad.buffer);\n",
        1,
        "    WHISPER_ASSERT(!wctx.params.flash_attn || !!kv_pad.buffer);\n",
    ),
    (
        "    if (!whisper_kv_cache_init(state->kv_pad, state->backends[0], ctx->itype,",
        1,
        "    if (ctx->params.flash_attn && !whisper_kv_cache_init(state->kv_pad, state->backends[0], ctx->itype,",
    ),
    (
        "    {\n        const size_t memory_size = ggml_nbytes(state->kv_pad.k) + ggml_nbytes(state->kv_pad.v);",
        1,
        "    if (ctx->params.flash_attn) {\n        const size_t memory_size = ggml_nbytes(state->kv_pad.k) + ggml_nbytes(state->kv_pad.v);",
    ),
];

/// The fourteenth change: DTW reads the alignment heads' cross-attention from the decoder's
/// buffer straight into its own tensor, the rows it keeps only. whisper.cpp first copied all of
/// it (a window's tokens × 1,500 audio positions × the heads) into a vector that each state then
/// kept: 3.6 MB resident a state for a window of 100 tokens with tiny.en's six heads, more with
/// more tokens, never read again. The same floats land in the same places.
const DTW_READS_THE_HEADS_IN_PLACE: [Change; 1] = [(
    "    auto & data = state->aheads_cross_QKs_data;\n    data.resize(n_tokens * n_audio_ctx * n_heads);\n    ggml_backend_tensor_get(state->aheads_cross_QKs, data.data(), 0, sizeof(float) * n_tokens * n_audio_ctx * n_heads);\n    for (int k = 0; k < n_heads; ++k) {\n        for (int j = 0; j < n_audio_tokens; ++j) {\n            memcpy(\n                (char *) w->data + j * w->nb[1] + k * w->nb[2],\n                data.data() + j * n_tokens + k * n_tokens * n_audio_ctx,\n                n_tokens * sizeof(float)\n            );\n        }\n    }\n",
    1,
    "    // A head's kept rows are contiguous in both: one read a head.\n    for (int k = 0; k < n_heads; ++k) {\n        ggml_backend_tensor_get(\n            state->aheads_cross_QKs,\n            (char *) w->data + k * w->nb[2],\n            sizeof(float) * k * n_tokens * n_audio_ctx,\n            sizeof(float) * n_tokens * n_audio_tokens\n        );\n    }\n",
)];

fn whisper_cpp_version(root: &Path) -> String {
    let cmake_lists = fs::read_to_string(root.join("CMakeLists.txt")).unwrap_or_default();
    cmake_lists
        .lines()
        .find_map(|line| line.strip_prefix("project(\"whisper.cpp\" VERSION "))
        .map(|rest| rest.trim_end_matches(')').trim().to_owned())
        .unwrap_or_else(|| panic!("no version in {}/CMakeLists.txt", root.display()))
}

fn main() {
    println!("cargo:rerun-if-changed=wrapper.h");

    let src = sources("CAPTIONS_WHISPER_SRC", &format!("whisper-rs-sys-{VERSION}"));
    if !src.join("whisper.cpp/src/whisper.cpp").is_file() {
        panic!(
            "the whisper.cpp sources (whisper-rs-sys {VERSION}) are not in {}: run \
             scripts/setup-whisper-cpp (make setup does), or point CAPTIONS_WHISPER_SRC at an \
             unpacked whisper-rs-sys {VERSION} crate",
            src.display()
        );
    }
    println!(
        "cargo:rerun-if-changed={}",
        src.join("whisper.cpp").display()
    );

    let root = fresh_copy(&src.join("whisper.cpp"), "whisper.cpp");
    change_file(
        &root.join("src/whisper.cpp"),
        BEAM_SEARCH_TOP_K
            .into_iter()
            .chain(BEAM_SEARCH_READS_ONLY)
            .chain(MAXIMA_IN_EIGHT_LANES)
            .chain(LOGITS_IN_4_BITS)
            .chain(DTW_GRAPH_ON_OUR_THREADS)
            .chain(LOGITS_ONLY_WHERE_ASKED)
            .chain(EXACT_NEAR_THE_TOP)
            .chain(EACH_CALL_SEEDED)
            .chain(LOOPS_STOP_EARLY)
            .chain(ENCODER_HEADS_ONE_AT_A_TIME)
            .chain(DTW_PASS_ASKS_NO_LOGITS)
            .chain(KV_CACHE_FOR_WHAT_A_DECODE_HOLDS)
            .chain(KV_PAD_FOR_FLASH_ATTENTION_ONLY)
            .chain(DTW_READS_THE_HEADS_IN_PLACE),
        &format!("the whisper.cpp of whisper-rs-sys {VERSION}"),
    );
    change_file(
        &root.join("ggml/src/ggml-cpu/llamafile/sgemm.cpp"),
        FIVE_COLUMNS_IN_ONE_PASS,
        &format!("the ggml of whisper-rs-sys {VERSION}"),
    );

    let bindings = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_arg(format!("-I{}", root.join("include").display()))
        .clang_arg(format!("-I{}", root.join("ggml/include").display()))
        // No `CargoCallbacks`: they watch every header read, and those are the copies
        // `fresh_copy` writes anew on every run, newer than the run itself, so cargo ran this
        // script (and compiled whisper.cpp and every crate above it again) on every build.
        // wrapper.h and the sources the copies come from are watched above.
        .generate()
        .unwrap_or_else(|e| panic!("generating whisper.cpp's bindings (needs libclang): {e}"));
    bindings
        .write_to_file(root.with_file_name("bindings.rs"))
        .unwrap_or_else(|e| panic!("writing bindings.rs: {e}"));

    let mut config = cmake::Config::new(&root);
    config
        // Optimised whatever the profile: it is the transcription's whole cost.
        .profile("Release")
        .define("CMAKE_BUILD_TYPE", "Release")
        .define("BUILD_SHARED_LIBS", "OFF")
        .define("WHISPER_BUILD_TESTS", "OFF")
        .define("WHISPER_BUILD_EXAMPLES", "OFF")
        .define("WHISPER_ALL_WARNINGS", "OFF")
        .define("WHISPER_ALL_WARNINGS_3RD_PARTY", "OFF")
        .pic(true);
    // ggml's switches: OpenMP by our feature; the CPU's matrix products through llamafile's
    // tiled kernels (tinyBLAS) in place of one dot product per output, a third less CPU time
    // per transcription on AVX2 (tiny.en, one thread: 3.2-3.6 s -> 2.1-2.5 s of user time on a
    // 5 s clip); and ggml's own from the environment, e.g. GGML_NATIVE=OFF for a binary that
    // runs on other CPUs. Set here, not by a workspace's settings, so every program that
    // depends on this crate gets the same whisper.cpp. CMake keeps a switch in its cache after
    // the variable is gone (a build with GGML_NATIVE=OFF stayed so after it was unset), so
    // every GGML_ entry is cleared first and set again; these come after the `-D`s above, and
    // the environment's last.
    let openmp = if env::var_os("CARGO_FEATURE_OPENMP").is_some() {
        "ON"
    } else {
        "OFF"
    };
    config
        .configure_arg("-UGGML_*")
        .configure_arg(format!("-DGGML_OPENMP={openmp}"))
        .configure_arg("-DGGML_LLAMAFILE=ON");
    for (key, value) in env::vars() {
        if key.starts_with("GGML_") {
            println!("cargo:rerun-if-env-changed={key}");
            config.configure_arg(format!("-D{key}={value}"));
        }
    }
    // Built once for every build of the same sources and settings in the target directory: the
    // tests', the release's, and a crate outside the workspace with other features or profile
    // settings each ran this same compile (80-90 s on two cores) in its own OUT_DIR.
    let script = Path::new(&env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join("build.rs");
    let destination = built_once("whisper.cpp", build_key(&root, &script), |dir| {
        config.out_dir(dir).build();
        // What is linked is installed in lib/; the objects are not needed again.
        let _ = fs::remove_dir_all(dir.join("build"));
    });

    println!(
        "cargo:rustc-link-search=native={}",
        destination.join("lib").display()
    );
    println!(
        "cargo:rustc-link-search=native={}",
        destination.join("lib64").display()
    );
    for lib in ["whisper", "ggml", "ggml-base", "ggml-cpu"] {
        println!("cargo:rustc-link-lib=static={lib}");
    }
    if env::var_os("CARGO_FEATURE_OPENMP").is_some() {
        println!("cargo:rustc-link-lib=dylib=gomp");
    }
    let target = env::var("TARGET").unwrap_or_default();
    if target.contains("apple") {
        println!("cargo:rustc-link-lib=dylib=c++");
        println!("cargo:rustc-link-lib=framework=Accelerate");
    } else if !target.contains("msvc") {
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
    // For crates that build on this one (DEP_WHISPER_WHISPER_CPP_VERSION).
    println!("cargo:WHISPER_CPP_VERSION={}", whisper_cpp_version(&root));
}
