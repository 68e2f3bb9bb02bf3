"""Prompt templates of the LLM judges and the MGBench span extractor (``str.format`` fields)."""

from __future__ import annotations

__all__ = ["AUDIORAG_CORRECTNESS_PROMPT", "AUDIORAG_ERROR_TYPE_PROMPT", "MGBENCH_UNDERSTANDING_PROMPT",
           "MGBENCH_SPAN_PROMPT"]

#: The inputs of both AudioRAG prompts, laid out the same way in each.
_AUDIORAG_INPUTS = """\
Question:
{question}

Audio attribute:
{audio_attr}

Ground truth:
{gt_answer}

Model answer:
{model_answer}

"""

#: AudioRAG correctness prompt. Inputs: question, audio attribute, reference, answer.
AUDIORAG_CORRECTNESS_PROMPT = """\
You are grading an answer to a question about an audio clip.
You see the question, an attribute of the audio (what the audio contains), the ground-truth
answer and the model's answer. The model's answer is correct when it reaches the same
final answer as the ground truth; paraphrases, extra explanation and equivalent names are
fine, a different or missing final answer is not.

""" + _AUDIORAG_INPUTS + """\
Reply with exactly one word: yes if the model answer is correct, no if it is not."""

#: AudioRAG error-type prompt (paper Appendix B, categories a-d), asked for wrong answers.
AUDIORAG_ERROR_TYPE_PROMPT = """\
You see a question about an audio clip, an attribute of the audio, the ground-truth answer
and a model answer that is wrong. Put the mistake into exactly one category:

a) Reasoning Error: the model misunderstood the question or reasoned incorrectly towards
   the answer; the mistake does not come from mishearing the audio or from missing
   external knowledge. A misread question is a reasoning error.
b) Audio Processing Error: the question needs the attribute of the audio to be recognised
   and the model recognised it wrongly.
c) Knowledge Error: the question needs knowledge beyond the audio and the model answered
   wrongly because that knowledge was missing or wrong.
d) Invalid Answer: the model gave no answer, or a nonsensical or unfinished one.

""" + _AUDIORAG_INPUTS + """\
Reply with the letter of the category only (a, b, c or d)."""

#: MGBench understanding prompt: instruction following first, then semantic correctness.
MGBENCH_UNDERSTANDING_PROMPT = """\
You are grading an answer to a question about a short piano excerpt.

Question:
{question}

Reference answer:
{gt_answer}

Model answer:
{model_answer}

First decide whether the model answer actually answers the question (a refusal, an
unrelated text or an empty reply does not). Then, only if it does, decide whether it is
semantically the same as the reference answer; paraphrases and musically equivalent
labels (for example "3/4" and "triple meter", "C minor" and "c minor") count as correct.

Reply with exactly two lines:
FOLLOWS: yes or no
CORRECT: yes or no"""

#: MGBench span extraction prompt: the auxiliary LLM only extracts spans, it does not judge.
MGBENCH_SPAN_PROMPT = """\
Below is a model's reply to a question asking for the time spans of musical events in an
audio clip. Extract every time span the reply gives, in seconds.

Reply:
{response}

Output a JSON list of [start, end] pairs in seconds, for example [[0.22, 1.34], [1.90, 2.47]].
Output [] if the reply says that there is no such event.
Output INVALID if the reply gives no time spans and does not say that there are none.
Output nothing else."""
