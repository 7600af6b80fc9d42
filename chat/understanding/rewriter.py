"""`ConversationRewriter`: the offline rewrite of a follow-up into a standalone question.

Retrieval sees one question at a time, so "它的面积有多大？", "第二类怎么处理？", "What does the second
one mean?" or "那退款呢？" must carry what they refer to. The references are resolved from the last
turn: its cited documents (the subject), its answer's list items and the cited document's sections
(ordinals), and its question (ellipsis).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import jieba

from chat.types import ConversationContext, PreviousTurn, Rewrite
from docmind.bilingual import Lexicon
from docmind.text import ANSWER_STOP_WORDS, GLUED_PRONOUN, STOP_WORDS, is_content_word

_ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_EN_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
                "eighth": 8, "ninth": 9, "tenth": 10, "last": -1}
_ZH_NOUNS = r"个|类|种|步|项|条|点|部分|节|章|问题|情况|方面|原因|阶段"
_EN_NOUNS = (r"one|item|step|point|category|type|kind|section|part|bullet|issue|problem|case|reason|option|"
             r"stage|thing")

# An ordinal refers back only when nothing names what it counts: "第二类怎么处理？" does, "最后一个王公是谁？"
# (followed by its own noun) does not.
ORDINAL_ZH = re.compile(r"(?:(?:上面|上述|刚才|前面|你)(?:说|讲|提到|列出?)?的)?"
                        rf"(?:第\s*([一二两三四五六七八九十]|\d{{1,2}})|(最后)(?:一)?)\s*(?:{_ZH_NOUNS})"
                        r"(?=$|[\s，,。.？?！!：:；;、]|呢|吗|吧|啊|呀|是|的|怎|如何|为什么|为何|有|要|需|讲|说|指|具体|再|也|和|与|跟|"
                        r"里|中|包括|包含|属于|应该|可以|能|会|用|在)")
ORDINAL_EN = re.compile(r"\b(?:the\s+)?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|"
                        rf"\d{{1,2}}(?:st|nd|rd|th))\s+(?:{_EN_NOUNS})s?\b", re.I)
# Chinese pronouns are whole words (jieba), so 应该, 其他 or 尤其 never count; a pronoun jieba glued to the modal
# after it (它会) counts as the pronoun alone.
_PRONOUNS_ZH = frozenset({"它", "它们", "他", "他们", "她", "她们", "其", "该", "这个", "那个", "这些", "那些",
                          "上述", "前者", "后者", "此"})
PRONOUN_EN = re.compile(r"\b(?:its|it|they|them|their|this one|that one|these|those|he|she|his|her)\b", re.I)
_POSSESSIVE_EN = re.compile(r"^(?:its|their|his|her)$", re.I)
ELLIPSIS_ZH = re.compile(r"^(?:那|那么|还有|然后|再说说)?\s*(.{1,24}?)\s*(?:呢|怎么样|又如何|又怎样)\s*[？?。!！]*$")
# "What about X?", and a fragment after "and" that only changes a phrase of the last question ("And for business
# trips?", "And in other cities?", "And sick leave?"): a phrase opened by a preposition or an article, or of at most
# four words, with no verb and no interrogative of its own, which a new question has.
ELLIPSIS_EN = re.compile(r"^(?:(?:and\s+|so\s+|ok,?\s+)?(?:what|how)\s+about\s+|(?:and|but|or)\s+(?=(?:"
                         r"for|in|on|at|with|during|after|before|from|by|under|over|without|the|a|an)\s|"
                         r"[^\s?.!]+(?:\s+[^\s?.!]+){0,3}\s*[?.!]*$))"
                         r"(?!.*\b(?:is|are|was|were|do|does|did|can|could|should|will|would|may|must|have|has|what|"
                         r"how|when|where|who|why|which)\b)(.{1,60}?)\s*[?.!]*$", re.I)
# A phrase opened by a preposition ("in Beijing", "for domestic trips"), up to the next one or the end of the clause.
_PREPOSITIONS = "for|in|on|at|with|during|after|before|from|by|under|over|without"
_ARTICLE = re.compile(r"^(?:the|a|an)\s+(?=\S)", re.I)
_EN_PHRASE = re.compile(rf"\b({_PREPOSITIONS})\s+((?:(?!\b(?:{_PREPOSITIONS})\b)[^?.!,;])+)", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)、．]|[一二三四五六七八九十]+、|\(\d{1,2}\))\s*(.+?)\s*$")
_REF = re.compile(r"\[\d{1,4}(?:\s*[,，、]\s*\d{1,4})*\]")
_NUMBERING = re.compile(r"^\s*(?:第?[一二两三四五六七八九十]+[、.．：:]|\d{1,2}[.)、．:：]|step\s+\d+[.:]?)\s*", re.I)
_CJK = re.compile(r"[\u4e00-\u9fff]")
# A code such as an error code, a priority or a model: letters then digits ("E2", "P1", "R5").
_CODE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{1,3})-?(\d{1,4})(?![0-9])")
_WORD = re.compile(r"[A-Za-z0-9]+")
ITEM_MAX_CHARS = 80
# A question this short that names nothing of its own leans on the last turn ("需要升级给谁？").
SHORT_FOLLOW_UP = 8


class _ZhPronouns:
    """`search` like a compiled pattern, over jieba's words: the first pronoun as a match-like span."""

    @staticmethod
    def search(text: str) -> _Span | None:
        for word, start, end in jieba.tokenize(text):
            if word in _PRONOUNS_ZH:
                return _Span(word, start, end)
            glued = GLUED_PRONOUN.match(word)
            if glued:
                return _Span(glued.group(1), start, start + len(glued.group(1)))
        return None


class _Span:
    def __init__(self, word: str, start: int, end: int) -> None:
        self._word, self._start, self._end = word, start, end

    def group(self, _: int = 0) -> str:
        return self._word

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end


PRONOUN_ZH = _ZhPronouns()


def _size(text: str) -> int:
    return len(_CJK.findall(text)) + len(_WORD.findall(text))


def _number(token: str) -> int:
    token = token.lower()
    if token in _EN_ORDINALS:
        return _EN_ORDINALS[token]
    if token in _ZH_DIGITS:
        return _ZH_DIGITS[token]
    digits = re.match(r"\d+", token)
    return int(digits.group(0)) if digits else 0


def answer_items(answer: str) -> list[str]:
    """The list items of an answer (bullets or numbers), citation markers and lead-in colons removed."""
    items = []
    for line in answer.splitlines():
        found = _LIST_ITEM.match(line)
        if found:
            text = _REF.sub("", found.group(1)).strip().rstrip("：:").strip()
            if text:
                items.append(text)
    return items


def _numbered(section: str) -> int:
    """The number a heading gives itself ("二、扣款…" → 2, "3. Rollback" → 3), or 0."""
    found = re.match(r"^\s*(?:第)?([一二两三四五六七八九十]|\d{1,2})(?:[、.．:：)]|\s)", section)
    return _number(found.group(1)) if found else 0


def _pick(items: Sequence[str], n: int) -> str:
    if not items or n == 0 or abs(n) > len(items) or (n > 0 and n > len(items)):
        return ""
    return items[n - 1] if n > 0 else items[-1]


def resolve_ordinal(n: int, previous: PreviousTurn) -> str:
    """The n-th item the last answer listed, else the n-th section of the document it cited."""
    item = _pick(answer_items(previous.answer), n)
    if not item and previous.sections:
        # A heading that numbers itself wins: "第二类" is "二、…" even after an unnumbered "适用范围".
        numbered = [s for s in previous.sections if _numbered(s) == n] if n > 0 else []
        item = numbered[0] if numbered else _pick(previous.sections, n)
    item = _NUMBERING.sub("", item).strip()
    return item[:ITEM_MAX_CHARS]


_NOT_CONTENT = ANSWER_STOP_WORDS | STOP_WORDS


def names_new_subject(nouns: Sequence[str], previous: PreviousTurn) -> bool:
    """Does the question name a thing (`nouns`: its nouns of two or more characters and content words in Latin
    script, see `_nouns`) that the last turn never mentioned? Then it opens a new topic: "Who is the CEO of the
    company?" after a VPN answer, "公司有健身房吗？" after a leave question. "多久要换一次？" or "And error 691?" name
    nothing new."""
    seen = " ".join((previous.question, previous.rewritten, previous.answer, *(s.title for s in previous.sources),
                     *previous.sections)).lower()
    return any(word not in seen for word in nouns)


# jieba's part-of-speech tags of words that name a thing: nouns (n, nr, ns, nt, nz, ng…), abbreviations (j: 社保, 医保,
# 产检) and Latin-script words (eng).
# A verbal or adjectival noun (vn, an) names one only as the question's first word, its topic ("工资几号发？"); after
# a verb it is the action asked about ("需要升级给谁？"). So does a verb that opens the question as the subject of
# a later verb ("退款多久到账？", "审批需要几天？"), when it is a content word; one that is the question's only verb
# is the action asked about ("搬到哪几层？"), and an everyday verb (需要, 知道, 使用) is how the question is put.
def _naming(flag: str, first: bool = False) -> bool:
    return flag.startswith("n") or flag in ("j", "eng") or first and flag in ("vn", "an")


def _verb_as_topic(cut: Sequence, i: int, opening: int) -> bool:
    """Whether word `i` is a verb that opens the question (at `opening`, see `_opening`) as its topic."""
    return i == opening and cut[i].flag == "v" and is_content_word(cut[i].word) \
        and any(t.flag.startswith("v") and t.flag != "vn" for t in cut[i + 1:])


# A date or time said first ("2月15日", "明天") is when the question asks about, not its topic: the topic is the word
# after it. A number that asks (几点, 多少) is the question itself, and what follows it is what is asked.
_ASKS = re.compile(r"几|多|哪|什么")


def _opening(cut: Sequence) -> int:
    """The index of the question's first word after a leading date or time ("2月15日诊所几点开诊？" → 诊所)."""
    return next((i for i, token in enumerate(cut)
                 if not (token.flag == "t" or token.flag in ("m", "x") and not _ASKS.search(token.word))), 0)


# The unit of a count ("几个小时", "多少公里"): what is counted in, not a thing the question names.
_UNIT = re.compile(r"^(?:小时|分钟|秒钟|钟头|星期|礼拜|工作日|公里|公斤|千克|平方米|平米|厘米|毫米)$")


def _opening_word(run: str, lexicon: Lexicon) -> str:
    """The longest word of the dictionary, two characters or more, that `run` (the question's opening characters)
    starts with; "" for none."""
    return next((run[:k] for k in range(len(run), 1, -1) if lexicon.english_for(run[:k])), "")


# Words that lead into a question without being part of it ("那后厨…", "请问后厨…"): jieba may glue them to the
# question's first characters (那后 is one of its words), which then never start the run of single characters.
_LEAD_IN = re.compile(r"^(?:那么|那|还有|另外|然后|请问|再问一下)[，,、\s]*(?=\S\S)")


def _nouns(text: str, lexicon: Lexicon | None = None) -> list[str]:
    """The words of `text` that name a thing: nouns of two or more characters, Latin content words of three letters
    or more, and the run of single characters the question opens with when jieba could not join them and one is a
    noun's (餐补 cut into 餐 / 补: a shortened word jieba does not know, as the topic), else the longest word of
    the dictionary (`lexicon`) the run opens with (年假 of 年 / 假 / 有, none tagged a noun) — also when jieba glued
    the word's last character to the next one (年 / 假能: 年假). Elsewhere such a run is as often a verb (它 / 史 / 称),
    and a pronoun never starts one. A count's unit (几个小时) names nothing."""
    # heavy: imported on first use, as loading the part-of-speech tables costs every process that imports the chat
    # pipeline (a server, each `manage.py` command, each test worker) about half a second of CPU.
    import jieba.posseg

    found: list[str] = []
    run: list[tuple[str, str]] = []  # single characters from the question's start on
    cut = list(jieba.posseg.cut(_LEAD_IN.sub("", text.strip()) or text.strip()))
    topic_at = _opening(cut)
    for i, token in enumerate([*cut, None]):
        word = token.word.strip().lower() if token is not None else ""
        if token is not None and len(word) == 1 and _CJK.match(word) and token.flag != "r" and len(run) == i:
            run.append((word, token.flag))
            continue
        if len(run) >= 2:
            joined = "".join(w for w, _ in run)
            if any(_naming(flag) for _, flag in run):
                found.append(joined)
            elif lexicon is not None:  # the longest word the run opens with: 年假 of 年 / 假 / 有
                found.extend([w for w in [_opening_word(joined, lexicon)] if w])
        elif len(run) == 1 and lexicon is not None and token is not None and _CJK.match(word):
            # the question's first character alone, the next word glued to it: 年 / 假能
            opening = _opening_word(run[0][0] + word, lexicon)
            if opening and opening not in _NOT_CONTENT and is_content_word(opening):
                found.append(opening)
        run = []
        if token is None or len(word) < 2 or word in _NOT_CONTENT \
                or not (_naming(token.flag, first=i == topic_at) or _verb_as_topic(cut, i, topic_at)) \
                or _UNIT.match(word) and i > 0 and cut[i - 1].flag == "m":
            continue
        if token.flag == "eng" and (len(word) < 3 or not word.isalpha()):
            continue
        found.append(word)
    return found


def named_code(previous: PreviousTurn) -> str:
    """The one model, product or error code the last question named ("AC-500什么时候上市？" → "AC-500"), itself or
    through its rewrite (a chain of follow-ups keeps its subject), which a pronoun after it refers to rather than the
    document that answered; "" when it named none or several."""
    codes = {m.group(0) for m in _CODE.finditer(previous.rewritten or previous.question)}
    return codes.pop() if len(codes) == 1 else ""


# A noun phrase a determiner opens ("a mattress", "the R5 router"), up to three words, ended by a word that joins, asks
# or stands for something rather than names it ("the trial period for a mattress": "trial period", then "mattress").
_DETERMINED = re.compile(r"\b(?:a|an|the|my|our|your|this|that)\s+([A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*){0,2})", re.I)
_JOINS_EN = frozenset(_PREPOSITIONS.split("|")) | {
    "of", "to", "and", "or", "but", "if", "than", "is", "are", "was", "were", "be", "been", "do", "does", "did", "can",
    "could", "should", "will", "would", "may", "might", "must", "have", "has", "had", "what", "when", "where", "which",
    "who", "why", "how", "i", "you", "we", "they", "it", "get", "need"}
# Singular pronouns: "it" stands for one thing the last question named.
_SINGULAR_EN = re.compile(r"^(?:it|its|this one|that one)$", re.I)


def named_thing(previous: PreviousTurn) -> str:
    """The last noun phrase a determiner opens in the last question, when it was asked in English ("How long is the
    trial period for a mattress?" → "mattress"), which "it" in an English follow-up stands for rather than the
    document that answered; "" when it has none."""
    if _CJK.search(previous.question):
        return ""
    found = ""
    for match in _DETERMINED.finditer(previous.question):
        words = []
        for word in match.group(1).split():
            if word.lower() in _JOINS_EN:
                break
            words.append(word)
        found = " ".join(words) or found
    return found


# Pronouns that stand for a person: after a question naming one, they mean that person, not a document.
_PERSONAL_ZH = frozenset({"他", "她", "他们", "她们"})
# Words jieba may tag as a name that ask rather than name ("周几").
_NOT_A_NAME = re.compile(r"几|什么|哪|谁|多少")


def named_person(previous: PreviousTurn) -> str:
    """The one person the last question named, itself or through its rewrite ("儿科陈晓燕什么时候出诊？" → "陈晓燕":
    jieba's person-name tag, two to four Chinese characters); "" when it named none or several."""
    # heavy: imported on first use (see `_nouns`)
    import jieba.posseg

    names = {t.word for t in jieba.posseg.cut(previous.rewritten or previous.question)
             if t.flag == "nr" and 2 <= len(t.word) <= 4 and all(_CJK.match(ch) for ch in t.word)
             and not _NOT_A_NAME.search(t.word)}
    return names.pop() if len(names) == 1 else ""


def _reframed(frame: str, focus: str) -> str:
    """The last question asked about `focus`: its word of the same kind replaced where there is one ("年假有几天？"
    + "婚假" → "婚假有几天？", "How many days of annual leave…" + "sick leave", "…limit in Beijing?" + "in other
    cities", "…VPN error 809?" + "error 691"), else the noun the question opens with, its topic ("健身房周末几点开门" +
    "游泳池" → "游泳池周末几点开门"), else the focus put in front. The frame never keeps an earlier focus, so a chain
    of "X呢？" follow-ups does not pile up."""
    focus = _ARTICLE.sub("", focus)  # "the AC-500" names what "AC-500" names
    phrase = _EN_PHRASE.fullmatch(focus)
    if phrase:
        # "And in Shanghai?" after "What is the hotel limit in Beijing?": the phrase with the same preposition changes.
        for other in _EN_PHRASE.finditer(frame):
            if other.group(1).lower() == phrase.group(1).lower():
                return frame[:other.start()] + focus + frame[other.end():]
    latin = focus.split()
    if 2 <= len(latin) <= 4 and all(_WORD.search(w) and not _CJK.search(w) for w in latin):
        # "And sick leave?" after "How many days of annual leave do I get?": the words ending in the same head noun.
        # "And error 691?" after "How do I fix VPN error 809?": the words opening with the same word(s).
        lead = r"\s+".join(re.escape(w) for w in latin[:-1])
        for same in (rf"(?:\b[A-Za-z0-9-]+\s+){{{len(latin) - 1}}}{re.escape(latin[-1])}\b",
                     rf"\b{lead}\s+[A-Za-z0-9-]+\b"):
            found = re.search(same, frame, re.I)
            if found is not None and found.group(0).lower() != focus.lower():
                return frame[:found.start()] + focus + frame[found.end():]
    code = _CODE.fullmatch(focus)
    if code:
        # "E4呢？" after "E2是什么意思？": the code of the same kind is what changes.
        for other in _CODE.finditer(frame):
            if other.group(1).lower() == code.group(1).lower() and other.group(0) != focus:
                return frame[:other.start()] + focus + frame[other.end():]
    size = len(focus)
    if size >= 2 and all(_CJK.match(ch) for ch in focus):
        for i in range(len(frame) - size + 1):
            word = frame[i:i + size]
            if word != focus and word[-1] == focus[-1] and all(_CJK.match(ch) for ch in word):
                return frame[:i] + focus + frame[i + size:]
        # heavy: imported on first use (see `_nouns`)
        import jieba.posseg

        opening = next(iter(jieba.posseg.cut(frame.strip())), None)
        if opening is not None and len(opening.word) >= 2 and opening.flag.startswith("n") \
                and all(_CJK.match(ch) for ch in opening.word) and opening.word != focus:
            start = frame.index(opening.word)
            return frame[:start] + focus + frame[start + len(opening.word):]
    return f"{focus} {frame}".strip()


def _without(text: str, subject: str) -> str:
    return text.replace(subject, "").strip(" ，,：:里中的") if subject and subject in text else text


class ConversationRewriter:
    """Deterministic: the same message and conversation always give the same rewrite.

    `lexicon`: a dictionary of the language's words, which tells a word jieba does not know (年假) from single
    characters when deciding whether a short question names a new subject; without one, jieba's tags alone decide."""

    def __init__(self, *, lexicon: Lexicon | None = None) -> None:
        self.lexicon = lexicon

    def run(self, *, message: str, context: ConversationContext) -> Rewrite:
        text = message.strip()
        refers = bool(ORDINAL_ZH.search(text) or ORDINAL_EN.search(text) or PRONOUN_ZH.search(text)
                      or PRONOUN_EN.search(text) or ELLIPSIS_ZH.match(text) or ELLIPSIS_EN.match(text))
        previous = context.previous
        if previous is None:
            return Rewrite(text=text, leans_back=refers)
        subject = previous.sources[0].title if previous.sources else ""
        # What the question leans on: the person the last question named when a pronoun stands for one ("她"), else the
        # code it named, else, for an English "it", the thing it named ("a mattress"), else the document its answer
        # cited first.
        pronoun = PRONOUN_ZH.search(text)
        person = named_person(previous) if pronoun is not None and pronoun.group(0) in _PERSONAL_ZH else ""
        singular = PRONOUN_EN.search(text)
        thing = named_thing(previous) if pronoun is None and singular and _SINGULAR_EN.match(singular.group(0)) else ""
        referent = person or named_code(previous) or thing or subject
        resolved: list[str] = []
        rewritten = text
        item = ""
        # A pronoun that became the person or code the last question named says what it stands for by itself.
        named = False
        ordinal = ORDINAL_ZH.search(text) or ORDINAL_EN.search(text)
        if ordinal:
            n = _number(ordinal.group(1) or ("last" if ordinal.re is ORDINAL_ZH and ordinal.group(2) else ""))
            item = resolve_ordinal(n, previous)
            if item:
                rewritten = rewritten[:ordinal.start()] + item + rewritten[ordinal.end():]
                resolved.append(f"{ordinal.group(0)} → {item}")
        ellipsis = ELLIPSIS_ZH.match(text) or ELLIPSIS_EN.match(text)
        if ellipsis and not PRONOUN_ZH.search(ellipsis.group(1)) and not PRONOUN_EN.search(ellipsis.group(1)):
            focus = item or ellipsis.group(1).strip()
            asked = previous.rewritten or previous.question
            earlier = ELLIPSIS_ZH.match(previous.question.strip()) or ELLIPSIS_EN.match(previous.question.strip())
            earlier_focus = earlier.group(1).strip() if earlier and previous.rewritten else ""
            # "那退款呢？" asks the last question again about something else; "第二个呢？" asks about the item.
            if item:
                rewritten = f"{subject} {focus}".strip()
            elif earlier_focus and earlier_focus in asked:
                # The last turn was itself "X呢？": X is what changes, the rest of its rewrite is asked again.
                rewritten = asked.replace(earlier_focus, focus, 1)
            else:
                rewritten = _reframed(_without(asked, subject), focus)
            resolved.append(f"{ellipsis.group(0)} → {rewritten}")
        elif referent:
            rewritten, hit = self._pronoun(rewritten, referent)
            if hit:
                resolved.append(f"{hit} → {referent}")
                named = referent != subject
        elif PRONOUN_ZH.search(text) or PRONOUN_EN.search(text):
            # Nothing was cited last time: the last question itself is the best description of "it" — or, when that
            # question was itself such a follow-up, what it was put after, so that a chain does not pile up.
            asked = previous.rewritten or previous.question
            if asked != previous.question and asked.endswith(f" {previous.question}"):
                asked = asked[:-len(previous.question)].strip()
            rewritten = f"{asked} {text}"
            resolved.append(f"context → {asked}")
        new_focus = bool(ellipsis) and not item
        # A short question leans on the last subject unless it names a new one: then it starts afresh; so does one of
        # any length that names no thing at all ("一次最多订几个小时？" after a question about booking rooms). The
        # subject is the code the last question named, when it named one ("定价多少？" after "AC-300什么时候发布？"):
        # the first document the answer cited may be only one of several that mention it.
        nouns = _nouns(text, self.lexicon)
        short_follow_up = (_size(text) <= SHORT_FOLLOW_UP or not nouns) and not names_new_subject(nouns, previous)
        if resolved and subject and subject not in rewritten and not new_focus and not named:
            rewritten = f"{subject} {rewritten}"
        elif short_follow_up and not resolved and not new_focus:
            # What the last question was about: the person or code it named, else the title of the document that
            # answered it with the last question's own topic words ("病假" of "病假有几天？" for "超过了怎么办？"),
            # which say what in that document was asked about. A question naming a thing of the same kind as that
            # topic (婚假 after 病假: the same last character, as `_reframed` reads "X呢？") asks about its own thing
            # and stands alone.
            before = _nouns(previous.question, self.lexicon)
            if not any(mine != theirs and mine[-1] == theirs[-1] for mine in nouns for theirs in before):
                # Chinese content words only: an English question's words are all tagged as names, its verbs too.
                words = " ".join(w for w in before if w not in rewritten and w not in subject and is_content_word(w)
                                 and all(_CJK.match(ch) for ch in w))[:ITEM_MAX_CHARS]
                topic = person or named_code(previous) or " ".join(w for w in (subject, words) if w)
                if topic and topic not in rewritten:
                    rewritten = f"{topic} {rewritten}"
                    resolved.append(f"context → {topic}")
        return Rewrite(text=rewritten, resolved=tuple(resolved), leans_back=refers or bool(resolved))

    @staticmethod
    def _pronoun(text: str, subject: str) -> tuple[str, str]:
        if subject in text:
            return text, ""
        for pattern in (PRONOUN_ZH, PRONOUN_EN):
            found = pattern.search(text)
            if found:
                word = found.group(0)
                replacement = f"{subject}'s" if _POSSESSIVE_EN.match(word) else subject
                return text[:found.start()] + replacement + text[found.end():], word
        return text, ""
