"""LanguageMeans: where an embedder puts Chinese and English text, as the mean vector of each language.

A multilingual embedder maps a sentence and its translation close together, but not onto each other: every
Chinese text sits to one side of every English text, by about the same vector. Next to that the difference between
topics is small, so a Chinese question ranks almost every Chinese passage above the English one that answers it
(and the reverse), and the answer never reaches the vector search's candidates. The question's vector less its
language's mean keeps what it asks and drops the part that says which language it asks in: among the other
language's passages it ranks by meaning. (Language-mean centring: Libovický et al., "On the Language Neutrality
of Pre-trained Multilingual Representations", 2020.) Moving the question to the other language's mean instead
also favours that language's most generic passages, the ones nearest its mean.

The means are a property of the embedder, measured on the parallel passages below (written for this, not on any
knowledge base). They are written as documents are: a title › section line, then two sentences of rules, figures
or instructions, over many unrelated subjects. Where the two languages sit apart depends on the kind of text:
the difference of the means of short everyday sentences points elsewhere than that of document passages (against
the difference of a bilingual team corpus's own Chinese and English chunks, cosine 0.69 for everyday sentences and
0.91 for these passages: `bench/language_means.py`), and a question is matched against document chunks.
"""
from __future__ import annotations

import logging
import threading

import numpy as np

log = logging.getLogger(__name__)

# The retrieval stage of the passages found by a centred question vector alone (kb.retrieval.hybrid); the local
# reranker does not read their cosine as agreement in words (docmind.rerank).
CENTRED_VECTOR_STAGE = "vector_translated"

PARALLEL_PASSAGES: tuple[tuple[str, str], ...] = (
    ("社区图书馆借阅规则 › 借阅期限\n"
     "每位读者最多可同时借阅五本图书，借期为二十一天。逾期未还的，每本每天收取滞纳金0.5元。",
     "Community library lending rules › Loan period\n"
     "Each reader may borrow up to five books at a time for twenty-one days. Overdue books are charged a late fee "
     "of 0.5 yuan per book per day."),
    ("门诊就诊须知 › 预约挂号\n"
     "患者可通过医院公众号提前七天预约挂号。就诊当天请携带身份证和医保卡，提前十五分钟到达候诊区。",
     "Outpatient visit guide › Appointments\n"
     "Patients can book an appointment up to seven days in advance through the hospital's official account. On the "
     "day of the visit, bring your ID card and medical insurance card and arrive at the waiting area fifteen "
     "minutes early."),
    ("洗衣机使用说明 › 故障排除\n"
     "如果显示屏出现错误代码E4，说明排水不畅。请关闭电源，清理底部的过滤器后重新启动。",
     "Washing machine instructions › Troubleshooting\n"
     "If the display shows error code E4, the water is not draining properly. Switch off the power, clean the "
     "filter at the bottom and restart the machine."),
    ("小学课程安排 › 课外活动\n"
     "每周三下午开设美术、书法和足球兴趣班。学生可自愿报名，每学期收取材料费一百元。",
     "Primary school timetable › After-school activities\n"
     "Art, calligraphy and football clubs are held every Wednesday afternoon. Pupils may sign up voluntarily, and "
     "a materials fee of 100 yuan is charged each term."),
    ("房屋租赁合同 › 维修责任\n"
     "房屋主体结构和水电管线的维修由出租人负责。承租人因使用不当造成的损坏，应当自行承担维修费用。",
     "Residential lease agreement › Repairs\n"
     "The landlord is responsible for repairs to the structure of the building and to water and electricity lines. "
     "The tenant shall bear the cost of repairing damage caused by improper use."),
    ("城市公交年度报告 › 运营概况\n"
     "全年共开通新线路十二条，日均客运量达到一百八十万人次，比上年增长百分之六。",
     "Annual report of the city bus company › Operations\n"
     "Twelve new routes were opened during the year, and average daily ridership reached 1.8 million trips, six "
     "percent more than the previous year."),
    ("酒店入住指南 › 退房\n"
     "退房时间为中午十二点。如需延迟退房，请提前联系前台，下午两点前免费，之后按半天房费收取。",
     "Hotel guest guide › Check-out\n"
     "Check-out time is 12 noon. For a late check-out, contact the front desk in advance: it is free until 2 pm, "
     "after which half a night's rate is charged."),
    ("数据库运维手册 › 备份\n"
     "生产数据库每天凌晨两点进行全量备份，每小时进行一次增量备份。备份文件保留三十天。",
     "Database operations manual › Backups\n"
     "The production database takes a full backup at 2 am every day and an incremental backup every hour. Backup "
     "files are kept for thirty days."),
    ("新能源汽车用户手册 › 充电\n"
     "使用家用充电桩充满电约需八小时。电量低于百分之二十时，仪表盘会亮起黄色提示灯。",
     "Electric vehicle owner's manual › Charging\n"
     "A full charge takes about eight hours with a home charger. When the battery falls below twenty percent, a "
     "yellow warning light comes on in the instrument panel."),
    ("食品安全检查通报 › 检查结果\n"
     "本次共抽查餐饮单位四十六家，其中三家存在食材过期问题，已责令限期整改。",
     "Food safety inspection notice › Findings\n"
     "Forty-six restaurants were inspected, three of which were found to be using expired ingredients and have "
     "been ordered to correct the problem within a set time."),
    ("健身房会员条款 › 暂停会籍\n"
     "会员因出差或生病可申请暂停会籍，每年最多两次，每次不超过三十天。",
     "Gym membership terms › Freezing a membership\n"
     "Members may freeze their membership because of travel or illness, at most twice a year and for no more than "
     "thirty days each time."),
    ("研究生招生简章 › 报名条件\n"
     "申请人须具有国家承认的本科学历，英语成绩达到大学英语六级四百二十五分以上。",
     "Graduate admissions prospectus › Eligibility\n"
     "Applicants must hold a recognised bachelor's degree and a College English Test Band 6 score of at least 425."),
    ("仓库安全管理制度 › 消防\n"
     "仓库内严禁吸烟和使用明火。灭火器每月检查一次，检查结果记录在巡检表上。",
     "Warehouse safety rules › Fire safety\n"
     "Smoking and open flames are strictly forbidden in the warehouse. Fire extinguishers are checked once a month "
     "and the results are recorded on the inspection sheet."),
    ("软件发布说明 › 已知问题\n"
     "在部分安卓设备上，切换深色模式后图标可能显示异常。该问题将在下一版本中修复。",
     "Software release notes › Known issues\n"
     "On some Android devices, icons may display incorrectly after switching to dark mode. This will be fixed in "
     "the next version."),
    ("农产品种植技术 › 施肥\n"
     "番茄移栽后十五天追施第一次肥料，以氮肥为主。结果期应增加钾肥，每亩用量约十五公斤。",
     "Crop growing guide › Fertiliser\n"
     "Apply the first top dressing fifteen days after transplanting tomatoes, mainly nitrogen. During fruiting, "
     "increase potash to about fifteen kilograms per mu."),
    ("航空公司行李规定 › 托运行李\n"
     "经济舱旅客可免费托运一件行李，重量不超过二十三公斤。超重行李按每公斤五十元收费。",
     "Airline baggage rules › Checked baggage\n"
     "Economy passengers may check one bag free of charge, weighing no more than 23 kilograms. Excess weight is "
     "charged at 50 yuan per kilogram."),
    ("物业服务公告 › 停水通知\n"
     "因管道检修，本周六上午八点至下午四点小区将暂停供水，请居民提前储水。",
     "Property management notice › Water outage\n"
     "Because of pipe maintenance, the water supply will be cut off on Saturday from 8 am to 4 pm. Residents are "
     "advised to store water in advance."),
    ("实验室安全守则 › 化学品管理\n"
     "所有化学试剂必须贴有标签，注明名称、浓度和配制日期。废液应倒入指定的回收容器。",
     "Laboratory safety code › Chemicals\n"
     "All chemical reagents must be labelled with their name, concentration and date of preparation. Waste liquids "
     "must be poured into the designated collection containers."),
    ("网上商城用户协议 › 账户安全\n"
     "用户应妥善保管账户密码。发现账户被盗用的，应立即通过客服热线冻结账户。",
     "Online store user agreement › Account security\n"
     "Users must keep their account password safe. If an account is misused, freeze it immediately through the "
     "customer service hotline."),
    ("养老保险政策解读 › 领取条件\n"
     "参保人员达到法定退休年龄且累计缴费满十五年的，可以按月领取基本养老金。",
     "Pension policy explained › Eligibility\n"
     "Insured persons who have reached the statutory retirement age and have paid contributions for at least "
     "fifteen years in total can receive a basic pension every month."),
    ("博物馆参观指南 › 开放时间\n"
     "博物馆周二至周日开放，上午九点至下午五点，下午四点停止入场。每周一闭馆。",
     "Museum visitor guide › Opening hours\n"
     "The museum is open Tuesday to Sunday from 9 am to 5 pm, with last entry at 4 pm. It is closed on Mondays."),
    ("工程施工方案 › 进度安排\n"
     "基础工程计划于三月底完成，主体结构施工工期为一百二十天，预计九月份竣工验收。",
     "Construction plan › Schedule\n"
     "The foundations are planned to be finished by the end of March. The main structure will take 120 days, and "
     "final acceptance is expected in September."),
    ("宠物医院服务项目 › 疫苗接种\n"
     "幼犬应在八周龄时接种第一针疫苗，之后每隔三周接种一次，共三针。",
     "Pet clinic services › Vaccination\n"
     "Puppies should receive their first vaccine at eight weeks of age, then one every three weeks, three doses in "
     "total."),
    ("会议纪要 › 决议事项\n"
     "会议决定将网站改版项目的上线时间推迟两周，由设计组负责在下周五前提交新方案。",
     "Meeting minutes › Decisions\n"
     "The meeting decided to postpone the launch of the website redesign by two weeks. The design team will submit "
     "a new proposal by next Friday."),
    ("信用卡章程 › 还款\n"
     "每月账单日后二十天为到期还款日。最低还款额为账单金额的百分之十。",
     "Credit card terms › Repayment\n"
     "The payment due date is twenty days after the monthly statement date. The minimum payment is ten percent of "
     "the statement balance."),
    ("高速公路出行提示 › 节假日\n"
     "节假日期间七座以下小型客车免收通行费，免费时段以驶离出口的时间为准。",
     "Motorway travel advice › Public holidays\n"
     "During public holidays, tolls are waived for passenger cars with fewer than seven seats. The free period is "
     "determined by the time the car leaves the exit."),
    ("打印机快速入门 › 更换墨盒\n"
     "打开前盖，等待墨盒移动到中间位置。按下旧墨盒的卡扣将其取出，然后装入新墨盒直到听到咔嗒声。",
     "Printer quick start › Replacing a cartridge\n"
     "Open the front cover and wait for the cartridge to move to the centre. Press the clip of the old cartridge "
     "to remove it, then insert the new one until it clicks."),
    ("社区卫生服务 › 家庭医生\n"
     "签约家庭医生的居民每年可享受一次免费体检，慢性病患者每季度接受一次随访。",
     "Community health services › Family doctors\n"
     "Residents who register with a family doctor receive a free health check once a year, and patients with "
     "chronic diseases are followed up every quarter."),
    ("大学宿舍管理规定 › 作息\n"
     "宿舍楼晚上十一点关门，十一点半熄灯。学生不得在宿舍内使用大功率电器。",
     "University dormitory rules › Hours\n"
     "Dormitory buildings close at 11 pm and the lights go out at 11:30 pm. Students may not use high-power "
     "electrical appliances in their rooms."),
    ("旅行社行程单 › 第三天\n"
     "早餐后乘车前往古镇，游览时间约三小时。午餐自理，下午返回酒店自由活动。",
     "Tour itinerary › Day three\n"
     "After breakfast, travel by coach to the old town for a visit of about three hours. Lunch is at your own "
     "expense; in the afternoon return to the hotel for free time."),
    ("电力公司服务承诺 › 故障抢修\n"
     "城区范围内接到故障报修后，抢修人员四十五分钟内到达现场。",
     "Power company service pledge › Fault repairs\n"
     "In the city area, repair crews reach the site within forty-five minutes of a fault being reported."),
    ("产品质量检验报告 › 结论\n"
     "经检测，该批次样品的抗拉强度和伸长率均符合国家标准要求，判定为合格。",
     "Product quality test report › Conclusion\n"
     "Testing showed that the tensile strength and elongation of this batch of samples meet the national standard, "
     "and the batch is judged acceptable."),
    ("车险理赔指南 › 报案\n"
     "发生交通事故后，应在四十八小时内拨打保险公司客服电话报案，并保留现场照片和交警出具的事故认定书。",
     "Car insurance claims guide › Reporting\n"
     "After a traffic accident, report it to the insurer's customer service line within 48 hours and keep photos "
     "of the scene and the accident report issued by the traffic police."),
    ("个人所得税申报说明 › 专项附加扣除\n"
     "纳税人赡养六十岁以上父母的，可以按照每月三千元的标准定额扣除。",
     "Individual income tax filing notes › Special deductions\n"
     "Taxpayers who support parents aged sixty or over may deduct a fixed 3,000 yuan a month."),
    ("手机套餐资费说明 › 超出部分\n"
     "套餐内流量用完后，国内流量按每GB五元收费，当月不再限速。",
     "Mobile plan pricing › Extra usage\n"
     "Once the data included in the plan is used up, domestic data is charged at five yuan per GB, with no speed "
     "limit for the rest of the month."),
    ("开放平台接口文档 › 调用频率\n"
     "每个应用每分钟最多调用接口六百次。超过限制时，接口返回错误码429，请稍后重试。",
     "Open platform API documentation › Rate limits\n"
     "Each application may call the API at most 600 times a minute. Beyond that limit the API returns error code "
     "429; retry later."),
    ("游泳馆管理规定 › 入场须知\n"
     "入场前须淋浴并佩戴泳帽。身高不足一米二的儿童须由成年人陪同下水。",
     "Swimming pool rules › Before entering\n"
     "Shower and put on a swimming cap before entering. Children under 1.2 metres tall must be accompanied in the "
     "water by an adult."),
    ("餐厅外卖服务 › 配送范围\n"
     "配送范围为门店周边三公里以内，订单满六十元免配送费，高峰时段送达时间约为四十分钟。",
     "Restaurant delivery service › Delivery area\n"
     "We deliver within three kilometres of the restaurant. Delivery is free for orders over 60 yuan, and at peak "
     "times delivery takes about forty minutes."),
    ("政务服务指南 › 居住证办理\n"
     "申请人在本市居住满半年的，可持身份证和租房合同到社区服务中心申领居住证，十五个工作日内发放。",
     "Government services guide › Residence permits\n"
     "Applicants who have lived in the city for six months may apply for a residence permit at the community "
     "service centre with their ID card and tenancy agreement; it is issued within fifteen working days."),
    ("物流服务条款 › 赔偿标准\n"
     "未保价的快件丢失或损毁的，按照运费的三倍赔偿，最高不超过五百元。",
     "Courier terms of service › Compensation\n"
     "For a lost or damaged parcel without declared value, compensation is three times the shipping fee, up to 500 "
     "yuan."),
    ("招聘启事 › 岗位要求\n"
     "本科及以上学历，三年以上相关工作经验，熟悉数据分析工具，具备良好的沟通能力。",
     "Job advertisement › Requirements\n"
     "A bachelor's degree or above, at least three years of relevant experience, familiarity with data analysis "
     "tools and good communication skills."),
    ("驾校学车须知 › 科目二\n"
     "学员须完成十六学时的场地训练后方可预约考试。考试不合格的，十天后可以补考一次。",
     "Driving school guide › Test part two\n"
     "Learners must complete sixteen hours of training on the practice ground before booking the test. Those who "
     "fail may retake it once after ten days."),
    ("幼儿园入园通知 › 开学准备\n"
     "请家长为孩子准备两套换洗衣物和一条午睡用的薄被，并在物品上写好孩子的名字。",
     "Kindergarten admission notice › Getting ready\n"
     "Parents should prepare two sets of spare clothes and a thin blanket for naps, with the child's name written "
     "on each item."),
    ("空调维修服务 › 收费标准\n"
     "上门检测费为五十元，维修后免收检测费。更换的零件保修九十天。",
     "Air conditioner repair service › Charges\n"
     "The home inspection fee is 50 yuan, waived if the unit is repaired. Replaced parts carry a ninety-day "
     "warranty."),
)


# Measured means by embedder name: they belong to the model, so backends rebuilt for a configuration change (or a
# test's settings) reuse them instead of embedding the sentences again.
_means_by_embedder: dict[str, tuple[np.ndarray, np.ndarray]] = {}


class LanguageMeans:
    """The mean embedding of the Chinese sentences and of their English translations, for one embedder, measured
    once per embedder name on first use (PARALLEL_PASSAGES: one batch); none when the embedder
    fails (asked again by the next LanguageMeans, not by this one)."""

    def __init__(self, embedder) -> None:
        self._embedder = embedder
        self._lock = threading.Lock()
        self._means: tuple[np.ndarray, np.ndarray] | None = None
        self._measured = False

    def means(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(Chinese mean, English mean), or None."""
        if not self._measured:
            with self._lock:
                if not self._measured:
                    self._means = self._measure()
                    self._measured = True
        return self._means

    def centred(self, vector: np.ndarray, *, chinese: bool) -> np.ndarray | None:
        """`vector` (one, or one per row, all in the language `chinese` says) less its language's mean, each of unit
        length; None without the means, when the vectors' size is not the embedder's, or when one vector is its
        language's mean (a row that is comes out as zeros)."""
        means = self.means()
        if means is None or np.shape(vector)[-1:] != np.shape(means[0]):
            return None
        centred = np.asarray(vector, dtype=np.float32) - means[0 if chinese else 1]
        if centred.ndim > 1:
            norms = np.linalg.norm(centred, axis=-1, keepdims=True)
            return centred / np.where(norms > 0, norms, 1.0)
        norm = float(np.linalg.norm(centred))
        return centred / norm if norm and np.isfinite(norm) else None

    def offsets(self, vector: np.ndarray) -> tuple[float, float] | None:
        """(Chinese, English): what a passage's language alone adds to its inner product with `vector` (the
        vector's inner product with that language's mean). A passage's search score less its language's offset is
        its inner product with the passage less its language's mean, so hits of the two languages found by a
        centred vector can be compared. None without the means or when the vector's size is not the embedder's."""
        means = self.means()
        if means is None or np.shape(vector) != np.shape(means[0]):
            return None
        return float(np.dot(vector, means[0])), float(np.dot(vector, means[1]))

    def _measure(self) -> tuple[np.ndarray, np.ndarray] | None:
        name = getattr(self._embedder, "name", None)
        if isinstance(name, str) and name in _means_by_embedder:
            return _means_by_embedder[name]
        try:
            vectors = np.asarray(self._embedder.embed_passages([text for pair in PARALLEL_PASSAGES for text in pair]),
                                 dtype=np.float32)
        except Exception:  # the vector search of the question's own language still stands
            log.exception("the embedder's language means could not be measured; no cross-language vector search")
            return None
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        means = vectors[0::2].mean(axis=0), vectors[1::2].mean(axis=0)
        if isinstance(name, str):
            _means_by_embedder[name] = means
        return means
