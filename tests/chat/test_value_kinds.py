"""value_kinds: which kind of value a question asks for, and whether a text states one, in Chinese and English."""
import pytest

from chat.value_kinds import asked_kind, states


@pytest.mark.parametrize(("question", "kind"), [
    ("年终奖什么时候发？", "date"),
    ("When does the pre-sale start?", "date"),
    ("And when is it paid?", "date"),
    ("几点上班？", "time of day"),
    ("What time should I arrive on day one?", "time of day"),
    ("试用期多长？", "duration"),
    ("How long are emails kept?", "duration"),
    ("How many days per week can I work from home?", "duration"),
    ("AC-300定价多少", "money"),
    ("How much does the filter cost?", "money"),
    ("How heavy is the AC-500?", "weight"),
    ("这台机器多高？", "size"),
    ("三季度卖了多少台？", "count"),
    ("售后客服电话是多少？", "phone number"),
    ("router admin address", "address"),
    ("回调地址是什么？", "address"),
    ("Which email address handles privacy questions?", "address"),
    ("下载链接在哪里？", "address"),
    ("When do external share links expire?", "date"),
    ("截止日期是什么？", "date"),
])
def test_a_question_that_says_which_kind_of_value_it_wants_asks_for_that_kind(question, kind):
    found = asked_kind(question)
    assert found is not None and found.name == kind


# A yes/no question, and a bare 多少 or "how many", whose answer can be any number or a name.
@pytest.mark.parametrize("question", ["VPN支持Linux吗？", "S级的系数是多少？", "How many employees do we have?",
                                      "谁负责预售推广？", "What does error E2 mean?",
                                      "What should I do when the filter light turns red?",
                                      "价格包含运费吗？", "Does the price include VAT?", "年假是否可以跨年使用？",
                                      "能退么？", "What should I do with a suspicious email?"])
def test_a_question_that_does_not_say_which_kind_asks_for_none(question):
    assert asked_kind(question) is None


@pytest.mark.parametrize(("question", "text"), [
    ("试用期多长？", "试用期为六个月。"),
    ("试用期多长？", "试用期为半年。"),
    ("How long is the probation period?", "The probation period is six months."),
    ("工单多久响应？", "工单在4个工作小时内响应。"),
    ("年终奖什么时候发？", "年终奖于次年3月随工资发放。"),
    ("什么时候可以申请远程办公？", "转正后的员工每周最多可以远程办公2天。"),
    ("When is the commission paid?", "Commission is paid in the month after each quarter."),
    ("When must the claim be filed?", "File the claim within 30 days."), ("When is rent due?", "Pay by Friday."),
    ("几点上班？", "上午9:30前到岗。"),
    ("AC-300定价多少", "AC-300首发定价为1999元。"),
    ("How much does the filter cost?", "The F300 filter is 199 CNY."),
    ("How heavy is the AC-500?", "It weighs 11.2 kg."),
    ("三季度卖了多少台？", "三季度销量4.1万台。"),
    # A count is stated in whatever measure word the document uses.
    ("一次能借几本书？", "普通读者证每次最多可借图书10册。"), ("一次最多买几张票？", "每个账号每次限购5张。"),
    ("售后客服电话是多少？", "客服热线400-820-1234。"),
    # A unit that labels its field or column.
    ("验收款是多少钱？", "付款节点：第二期验收款；比例：50%；金额（元）：432,000。"),
    ("What is the unit price?", "Item: CADR test chamber; Unit price (CNY): 268,000."),
    ("router admin address", "Open 192.168.5.1 in a browser."),
    ("Which address do I connect the VPN client to?", "Server: vpn.qinghe.example"),
    ("Which email address handles privacy questions?", "Write to privacy@qinghe.example."),
    ("公司地址在哪？", "公司位于上海市浦东新区张江路88号。"),
    ("新办公室地址在哪？", "新办公室在金桥大厦7楼。"),
])
def test_a_value_of_the_kind_asked_is_stated_in_either_language_and_numeral(question, text):
    assert states(asked_kind(question), text)


@pytest.mark.parametrize(("question", "text"), [
    ("年终奖什么时候发？", "年终奖系数：S级2.0，A级1.5，B级1.0。"),
    ("试用期多长？", "试用期员工不参加当期考核。"),
    ("How heavy is the AC-500?", "The AC-500 adds a 4.3-inch touch display."),
    # A preposition before a version number is not a time.
    ("When was Atlas CRM 5.2 released?", "A direct upgrade to 5.2 is supported from 5.0 and 5.1 only."),
    ("三季度卖了多少台？", "三季度退货率为2.3%。"),
    ("售后客服电话是多少？", "邮件在1个工作日内回复。"),
    ("What is the AC-500 price?", "Its price will be announced at launch."),
    ("router admin address", "The first sign-in asks you to set an admin password."),
    ("公司地址在哪？", "地址见公司官网的联系我们页面。"),
])
def test_a_text_on_the_topic_without_a_value_of_the_kind_states_none(question, text):
    assert not states(asked_kind(question), text)
