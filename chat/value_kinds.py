"""The kind of value a question asks for (a duration, a date, a time of day, an amount of money, an address, a weight,
a size, a count of things, a phone number) and whether a text states a value of that kind.

A passage on the question's topic that states no value of the kind asked ("年终奖什么时候发？" over the bonus
coefficients, "试用期多长？" over a rule about probationers, "How heavy is the AC-500?" over its features) does not
answer it, however many of its words it shares. The kinds and their units are the languages' own (Chinese and
English), not any document's; a kind is asked only where the question says which (多久, 几点, 多少台, how long),
not by a bare 多少 or "how many", whose answer can be any number.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# A number as the documents write it: digits, Chinese numerals (三, 两, 十五, 半), English number words.
_NUMBER = (r"(?:\d+(?:[.,，]\d+)*|[零〇一二两三四五六七八九十百千万亿半几数]+|"
           r"\b(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
           r"fifty|sixty|ninety|hundred|half|several|a few)\b)")
_TIME_UNIT = (r"(?:个)?(?:工作)?(?:天|日|周|星期|礼拜|个?月|年|小时|钟头|分钟|秒|"
              r"\s*(?:working\s+|business\s+|calendar\s+)?(?:days?|weeks?|months?|years?|hours?|minutes?|seconds?)\b)")
_MONTHS = (r"january|february|march|april|may|june|july|august|september|october|november|december|"
           r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_WEEKDAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"


# Measure words a count of things is asked and stated with; a count is also stated with 个, and asked with 个人.
_MEASURE_WORDS = ("台|人|名|位|家|间|辆|套|件|张|份|条|项|次|所|座|部|本|册|页|款|只|块|把|枚|支|瓶|盒|箱|包|袋|"
                  "节|门|场|笔|户")


def _labelled(units: str) -> str:
    """A value whose unit labels its field or column: "金额（元）：86,400", "Price (CNY): 1,299", "重量(kg) 11.2"."""
    return rf"[（(]\s*(?:{units})\s*[）)]\s*[:：;；]?\s*\d"


@dataclass(frozen=True)
class ValueKind:
    name: str
    asked: re.Pattern[str]    # the question asks for this kind
    stated: re.Pattern[str]   # a text states a value of it


# Most specific first: "几点" is a time of day, not a date; "多少钱" is money, not a count; "几斤" a weight.
KINDS: tuple[ValueKind, ...] = (
    ValueKind("time of day",
              re.compile(r"几点|\bwhat time\b|\bat what time\b", re.I),
              re.compile(r"\d{1,2}\s*[:：]\s*\d{2}|" + _NUMBER + r"\s*点|[上下]午|中午|晚上|凌晨|"
                         r"\b\d{1,2}\s*(?:am|pm)\b|\bnoon\b|\bmidnight\b", re.I)),
    ValueKind("phone number",
              re.compile(r"电话|手机号|热线|\bphone\b|\bhotline\b|\bcontact number\b", re.I),
              re.compile(r"\d[\d\s\-–]{2,}\d|\+\d")),
    ValueKind("money",
              re.compile(r"多少钱|多少元|几块钱|多贵|价格|售价|定价|价钱|卖多少|费用(?:是)?多少|报销多少|补贴多少|"
                         r"\bhow much (?:does|do|did|is|are|will)\b.*\b(?:cost|costs|price|pay|charge)\b|"
                         r"\bprice\b|\bcost\b|\bhow much money\b", re.I),
              re.compile(_NUMBER + r"\s*(?:万|亿|千)?\s*(?:元|块|美元|欧元|港币|"
                         r"\b(?:cny|usd|eur|rmb|yuan|dollars?|euros?)\b)|"
                         r"(?:¥|￥|\$|€|\b(?:cny|usd|eur|rmb)\b)\s*\d|免费|不收费|\bfree\b|\bno charge\b|"
                         + _labelled(r"万?元|cny|usd|eur|rmb|yuan"), re.I)),
    ValueKind("duration",
              re.compile(r"多久|多长(?!度)|多少时间|几天|几个?月|几年|几周|几个?星期|几个?小时|几分钟|多少天|多少个?月|"
                         r"多少年|多少(?:个)?小时|多少分钟|有效期多长|\bhow long\b|\bhow soon\b|\bhow quickly\b|"
                         r"\bhow many (?:working |business |calendar )?(?:days|weeks|months|years|hours|minutes)\b",
                         re.I),
              re.compile(_NUMBER + r"\s*" + _TIME_UNIT + r"|永久|长期|终身|立即|立刻|马上|即时|当天|当日|随时|"
                         r"\b(?:immediately|permanently|indefinitely|forever|right away|at once|same day)\b", re.I)),
    ValueKind("date",
              # "when" asks only as the question's first word (or after and/so/but, since/until/by): elsewhere it
              # joins a condition ("What should I do when the light is red?").
              re.compile(r"什么时候|何时|哪天|哪一天|几号|几月|哪个月|哪一?年|什么日期|截止日期|"
                         r"^\W*(?:(?:and|so|but)\s+)?when\b|\b(?:since|until|till|by) when\b|\bwhat date\b|"
                         r"\bwhich (?:day|date|month|year)\b|\bwhat day\b", re.I),
              re.compile(r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]?|\d{4}\s*年|\d{1,2}\s*[日号]|" + _NUMBER + r"\s*(?:月|季度)|"
                         r"周[一二三四五六日末]|星期|礼拜|每(?:天|日|周|月|季度?|年)|[月年季](?:底|初|末|中)|次[日月年]|"
                         r"当[天日月年]|(?<=[\u4e00-\u9fff])(?:以|之)?[前后内](?![\u4e00-\u9fff])|"
                         r"(?<=[\u4e00-\u9fff])(?:以|之)?[前后内](?=的|起|开始|可|须|需|应|即|方可|才)|期间|届时|节假日|工作日|"
                         rf"\b(?:{_MONTHS}|{_WEEKDAYS})\b|\b\d{{4}}\b|"
                         # A preposition says when only of a time after it ("within 30 days", "by Friday", "from
                         # 1 May"): "supported from 5.0" names a version.
                         r"\b(?:before|after|within|by|until|from|during|end of|start of|beginning of)\s+"
                         r"(?:the\s+|each\s+|every\s+|next\s+|\d+\s+)?(?:\d+(?![.,]\d)|"
                         rf"(?:{_MONTHS}|{_WEEKDAYS})\b|(?:today|tomorrow|noon|midnight|day|week|month|quarter|year)s?\b)|"
                         r"\b(?:each|every|once|today|tomorrow|weekly|monthly|yearly|annually|quarterly|daily|day|week|"
                         r"month|quarter|year)\b",
                         re.I)),
    # Where something is: a web or network address (a link, a host, an IP), an e-mail address or a street address.
    # After the date: "When do share links expire?" asks when.
    ValueKind("address",
              re.compile(r"网址|链接|地址|\bip\b|\b(?:web |e-?mail |ip |server |admin |street )?address(?:es)?\b|"
                         r"\burls?\b|\bwebsites?\b|\blinks?\b", re.I),
              re.compile(r"\bhttps?://|\bwww\.|\b[\w-]+(?:\.[\w-]+)*\.(?:com|cn|net|org|io|edu|gov|example|local|"
                         r"internal|corp)\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|"
                         r"[\u4e00-\u9fff]{2,}(?:路|街|大道)\d*号?|\d+\s*号(?:楼|院)?|[\u4e00-\u9fff]{2,}(?:大厦|广场|园区)|"
                         r"\d+\s*(?:楼|层)|\b\d+\s+[a-z]+(?:\s[a-z]+)?\s(?:road|street|avenue|rd|st|ave)\b|"
                         r"\b(?:floor|building|room|suite)\s+\d+|\b\d+(?:st|nd|rd|th) floor\b", re.I)),
    ValueKind("weight",
              re.compile(r"多重|重量|几斤|几公斤|\bhow heavy\b|\bweigh(?:s|t)?\b", re.I),
              re.compile(_NUMBER + r"[\s-]*(?:公斤|千克|克|斤|吨|kg|g|t|lbs?|pounds?|grams?|kilo(?:gram)?s?|"
                         r"tonnes?|tons?)(?![a-z])|" + _labelled(r"kg|g|公斤|千克|克|lbs?"), re.I)),
    ValueKind("size",
              re.compile(r"多高|多宽|多深|多厚|多大(?:面积|尺寸)|面积|尺寸|体积|容量|功率|"
                         r"\bhow (?:tall|wide|deep|thick|big|large)\b|\bdimensions?\b|\bsize\b|\bcapacity\b|\bpower\b",
                         re.I),
              re.compile(_NUMBER + r"[\s-]*(?:毫米|厘米|公分|米|寸|英寸|平方米?|平米|立方米?|升|毫升|瓦|千瓦|"
                         r"mm|cm|m|km|m²|m2|㎡|m³|l|ml|w|kw|mah|gb|tb|\"|″|inch(?:es)?|feet|foot|ft|square|cubic|"
                         r"liters?|litres?|watts?|metres?|meters?)(?![a-z])|\d+\s*[x×*]\s*\d+|"
                         + _labelled(r"mm|cm|m|km|米|厘米|毫米|m²|㎡|平方米|m³|l|升|w|瓦|kw"), re.I)),
    # A count is stated with any measure word, not only the one asked with: a document counts books in 册 where the
    # question asks 几本, machines in 部 for 几台, people in 名 for 几个人.
    ValueKind("count",
              re.compile(rf"(?:多少|几)(?:个人|{_MEASURE_WORDS})"),
              re.compile(_NUMBER + rf"\s*(?:万|千|百)?\s*(?:个|{_MEASURE_WORDS})")),
)


# A question answered by yes or no ("价格包含运费吗？", "能退么？", "Does the price include VAT?") asks for no value,
# whatever kind of thing it names; one ending in 什么 asks for one ("回调地址是什么？").
_YES_NO = re.compile(r"(?:吗|(?<![什怎那这多])么)[\s？?。!！]*$|是否|能否|可否|有没有|是不是|能不能|可不可以|会不会|"
                     r"^\W*(?:is|are|was|were|does|do|did|can|could|will|would|should|shall|may|has|have|had|must)\b",
                     re.I)


def asked_kind(question: str) -> ValueKind | None:
    """The kind of value `question` asks for, or None when it does not say (a yes/no question, a bare 多少)."""
    if _YES_NO.search(question.strip()):
        return None
    for kind in KINDS:
        if kind.asked.search(question):
            return kind
    return None


def states(kind: ValueKind, text: str) -> bool:
    """Does `text` state a value of `kind`?"""
    return kind.stated.search(text) is not None
