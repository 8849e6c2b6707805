"""Generate the training set (data/train.jsonl) from templates and slot fillers; deterministic.

Run: python -m routing.classifier.make_data
The held-out set (data/heldout.jsonl) is hand-written separately and is never produced here.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

OUT_PATH = Path(__file__).with_name("data") / "train.jsonl"
HAND_DIR = Path(__file__).with_name("data") / "hand"
HELDOUT_PATH = Path(__file__).with_name("data") / "heldout.jsonl"
SEED = 20261012
PER_FAMILY = 170
PER_TEMPLATE = 3  # distinct fills kept per template: templated rows are near-duplicates, so cap them
HANDWRITTEN_WEIGHT = 1

SYSTEMS = [
    "", "", "", "",
    "You are a helpful assistant.",
    "You are a concise assistant. Answer clearly.",
    "You are Inferbase Assistant, built to help users with any request.",
    "Always respond in a friendly tone.",
    "You are an expert assistant working for a software company.",
    "Vous êtes un assistant utile.",
    "Eres un asistente útil y preciso.",
    "You are ChatGPT, a large language model. Knowledge cutoff: 2024-06. Current date: 2026-03-02.",
    "You are a helpful, harmless and honest assistant. If you don't know something, say so.",
    "You are a customer support assistant for Northwind Outfitters. Be polite and concise. Do not discuss competitors.",
    "Answer in the same language as the user.",
    "You are a helpful assistant. Format answers in Markdown.",
    "Du bist ein hilfreicher Assistent.",
    "Você é um assistente prestativo.",
    "你是一个乐于助人的助手。",
    "あなたは親切なアシスタントです。",
    "Ты — полезный ассистент.",
    "Sei un assistente disponibile e preciso.",
    "You are an internal assistant at a fintech company. Never reveal customer data. Keep answers short unless asked.",
]

SLOTS: dict[str, list[str]] = {
    "plang": ["Python", "JavaScript", "TypeScript", "Go", "Rust", "Java", "C#", "C++", "Ruby", "Kotlin", "PHP", "Swift", "Bash"],
    "small_code": [
        "reverses a string", "checks whether a number is even", "returns the largest item in a list",
        "counts the vowels in a word", "converts Celsius to Fahrenheit", "removes duplicates from a list",
        "capitalises every word in a sentence", "sums the digits of an integer", "checks if a string is a palindrome",
        "flattens a nested list", "returns today's date as ISO text", "merges two dictionaries",
    ],
    "mid_code": [
        "parses a CSV file and groups rows by a column", "implements an LRU cache with a fixed capacity",
        "paginates results from a REST API until there are no more pages", "validates email addresses and reports the invalid ones",
        "reads a log file and counts errors per hour", "retries an HTTP request with exponential backoff",
        "builds a trie and supports prefix search", "debounces a function call", "serialises a tree to JSON and back",
        "computes a moving average over a stream of numbers", "rate limits calls per user with a token bucket",
    ],
    "hard_code": [
        "a lock-free single-producer single-consumer ring buffer", "a distributed rate limiter backed by Redis that stays correct under clock skew",
        "an incremental parser for a JSON superset with error recovery", "a B+ tree with range scans and concurrent readers",
        "a consistent-hashing ring with virtual nodes and rebalancing", "a query planner that reorders joins by estimated cardinality",
        "a garbage collector using tri-colour marking", "a Raft log replication module", "an async job scheduler with priorities, cancellation and retries",
    ],
    "error": [
        "TypeError: 'NoneType' object is not subscriptable", "KeyError: 'user_id'", "IndexError: list index out of range",
        "Uncaught TypeError: Cannot read properties of undefined (reading 'map')", "NullPointerException",
        "segmentation fault (core dumped)", "error[E0502]: cannot borrow `v` as mutable because it is also borrowed as immutable",
        "ModuleNotFoundError: No module named 'requests'", "deadlock detected", "panic: runtime error: invalid memory address or nil pointer dereference",
    ],
    "snippet": [
        "def avg(xs):\n    return sum(xs) / len(xs)",
        "for (let i = 0; i <= arr.length; i++) {\n  total += arr[i];\n}",
        "SELECT name, COUNT(*) FROM orders GROUP BY customer_id;",
        "fn first(v: &Vec<i32>) -> i32 { v[0] }",
        "if x = 5:\n    print('five')",
        "const data = fetch(url).json();",
        "public int fib(int n) { return fib(n-1) + fib(n-2); }",
        "items.sort(key=lambda x: x.price, reversed=True)",
    ],
    "concept_code": [
        "closures", "decorators", "async/await", "generics", "dependency injection", "the virtual DOM",
        "database indexes", "Big-O notation", "recursion", "pointers", "the GIL", "REST vs GraphQL",
    ],
    "a": [str(n) for n in (3, 7, 12, 15, 24, 36, 48, 99, 125, 256, 1024, 37, 81)],
    "b": [str(n) for n in (2, 4, 5, 9, 11, 13, 17, 25, 64, 8, 6)],
    "percent": ["15%", "20%", "7.5%", "35%", "12%", "60%"],
    "fn_expr": ["x^2 + 3x", "sin(x) cos(x)", "e^(2x)", "ln(x^2 + 1)", "x^3 - 4x + 1", "1/(1+x^2)", "x e^x", "sqrt(x) + 1/x"],
    "proof_claim": [
        "there are infinitely many primes", "the square root of 2 is irrational", "the sum of the first n odd numbers is n^2",
        "every finite group of prime order is cyclic", "n^3 - n is divisible by 6 for every integer n",
        "a continuous function on a closed interval attains its maximum", "the harmonic series diverges",
        "any tree with n vertices has n - 1 edges", "the product of two consecutive integers is even",
    ],
    "item": ["apples", "books", "tickets", "marbles", "pencils", "chairs", "cupcakes"],
    "person": ["Alice", "Bob", "Carmen", "Deepak", "Eva", "Farid", "Grace", "Hiro", "Ines", "Jonas"],
    "puzzle_thing": ["three boxes labelled wrongly", "a knight and a knave", "four people crossing a bridge with one torch",
                     "a wolf, a goat and a cabbage", "two doors with one liar guard", "twelve coins with one counterfeit"],
    "option_a": ["a monolith", "PostgreSQL", "renting", "hiring a senior engineer", "a four-day week", "building in-house", "buying a used car"],
    "option_b": ["microservices", "MongoDB", "buying a flat", "two juniors", "flexible hours", "buying a SaaS tool", "leasing a new car"],
    "planning": ["a three-day trip to Rome on a tight budget", "moving house while working full time", "launching a product in six weeks",
                 "a wedding for 80 guests", "studying for four exams in two weeks", "migrating a team to a new CI system"],
    "claim": ["remote work always lowers productivity", "raising the minimum wage causes unemployment", "correlation proves causation in this study",
              "we should ban cars from city centres", "AI will replace most programmers", "nuclear power is too dangerous to use"],
    "country": ["France", "Japan", "Brazil", "Canada", "Kenya", "Australia", "Norway", "Mexico", "India", "Egypt"],
    "fact_thing": ["photosynthesis", "inflation", "the French Revolution", "black holes", "the immune system", "plate tectonics",
                   "the Renaissance", "blockchain", "vaccines", "the water cycle", "quantum entanglement", "the Cold War"],
    "person_fact": ["Marie Curie", "Napoleon", "Ada Lovelace", "Nelson Mandela", "Leonardo da Vinci", "Frida Kahlo", "Alan Turing", "Cleopatra"],
    "invention": ["the telephone", "the printing press", "penicillin", "the World Wide Web", "the steam engine", "the light bulb"],
    "audience": ["my manager", "a client", "new hires", "our customers", "my landlord", "the hiring committee", "investors"],
    "writing_topic": ["a delayed shipment", "a product launch", "a team offsite", "a price increase", "a job application",
                      "a charity run", "a new coffee shop", "a lost cat", "the first day of spring"],
    "genre": ["science fiction", "mystery", "fairy tale", "horror", "romance", "fable"],
    "lang_to": ["French", "Spanish", "German", "Italian", "Portuguese", "Japanese", "Chinese", "Russian", "Dutch", "Korean"],
    "short_phrase": ["Where is the train station?", "Thank you for your help.", "The meeting is postponed until Monday.",
                     "I would like a table for two.", "Please keep the door closed.", "Our office opens at nine.",
                     "Happy birthday, my friend!", "The package arrived damaged."],
    "feeling": ["stressed about work", "a bit lonely lately", "bored this weekend", "nervous about an interview", "happy today", "tired all the time"],
    "chat_topic": ["your favourite movie", "rainy days", "pizza toppings", "weekend plans", "cats or dogs", "the best season"],
    "fields": ["names and dates", "company names and amounts", "email addresses", "product, price and quantity",
               "people, roles and organisations", "addresses and phone numbers", "dates and deadlines"],
    "tool_ask": [
        "What's the weather in Lisbon right now?", "Book a table for four at 8pm tonight.", "Send an email to Sam saying I'll be late.",
        "Look up the latest price of AAPL.", "Create a calendar event for Friday at 3pm called Design review.",
        "Search our docs for the refund policy.", "How many open tickets are assigned to me?", "Convert 250 USD to EUR at today's rate.",
        "Find flights from Madrid to Berlin next Tuesday.", "Turn off the living room lights.", "Get the order status for #48213.",
        "Add milk and eggs to my shopping list.", "What's on my calendar tomorrow?", "Run the test suite and tell me what fails.",
    ],
}

PASSAGES = [
    "The city council voted on Tuesday to expand the bike-lane network by 40 kilometres over the next three years. "
    "Supporters argued that the lanes would reduce traffic deaths and cut emissions, while several shop owners worried "
    "that removing parking spaces would hurt their business. The plan will cost an estimated 18 million euros, funded "
    "partly by a regional climate grant. Construction on the first section starts in March.",
    "Acme Corp reported third-quarter revenue of $4.2 billion, up 12% year over year, driven by strong cloud sales. "
    "Operating margin fell slightly to 21% because of higher hiring costs. The company raised its full-year guidance "
    "and announced a $500 million share buyback. CEO Dana Whitfield said the company would keep investing in AI features.",
    "Researchers at the University of Leeds found that adults who walked at least 7,000 steps a day had a 30% lower risk "
    "of heart disease than those who walked fewer than 4,000. The study followed 12,000 participants for eight years. "
    "The authors caution that the results show an association and not necessarily cause and effect.",
    "Meeting notes, 14 May. Attendees: Priya (PM), Tom (backend), Lena (design). Decisions: the onboarding flow ships on "
    "June 3; Tom will fix the login timeout bug by Friday; Lena will deliver the new icons next week. Open question: "
    "whether to support SSO in the first release. Next meeting on 21 May at 10:00.",
    "Dear support team, I ordered a blue wool sweater (order 77812) on 2 April and paid 89.90 EUR. It arrived on 15 April "
    "with a hole in the left sleeve. I would like a replacement in size M or a full refund. You can reach me at "
    "m.rossi@example.com or +39 333 123 4567. Regards, Marco Rossi, Via Roma 12, 20121 Milano.",
    "The Amazon rainforest covers about 5.5 million square kilometres and holds roughly 10% of the world's known species. "
    "Deforestation, mainly for cattle ranching and soy farming, has removed around 17% of the forest in the last fifty "
    "years. Scientists warn that beyond a tipping point of 20 to 25% loss, large parts could turn into savanna.",
    "Our new app update introduces dark mode, offline sync and a redesigned search bar. Users on older phones reported "
    "slower start-up times, which the team traced to a large image cache. A patch released on Thursday reduced start-up "
    "time by 40%. The next release will focus on accessibility, including larger tap targets and screen-reader labels.",
    "Invoice INV-2024-0193 issued by Northwind Traders to Blue Harbor Ltd on 3 March 2024. Items: 12 office chairs at "
    "$145.00 each, 3 standing desks at $520.00 each. Subtotal $3,300.00, tax 8% $264.00, total $3,564.00. Payment due "
    "within 30 days to account GB29 NWBK 6016 1331 9268 19.",
    "Sleep researchers recommend that adults get seven to nine hours of sleep a night. Lack of sleep affects memory, "
    "mood and the immune system. Simple habits help: keeping a regular schedule, avoiding screens an hour before bed, "
    "limiting caffeine after noon and keeping the bedroom cool and dark.",
    "Job posting: Senior Data Engineer, Berlin (hybrid). Salary 75,000-90,000 EUR. Requirements: 5+ years with Python "
    "and SQL, experience with Spark or Flink, familiarity with AWS. Contact: jobs@datafirm.de. Applications close on 30 June.",
    "In 1969 the Apollo 11 mission landed the first humans on the Moon. Neil Armstrong and Buzz Aldrin spent about two "
    "and a half hours outside the lunar module, collecting 21.5 kg of samples, while Michael Collins orbited above. "
    "The mission returned safely to Earth on 24 July.",
    "The quarterly survey of 2,300 employees shows satisfaction rising from 68% to 74%. The biggest gains were in "
    "flexibility and manager support; the lowest scores remained in career growth and pay transparency. HR plans to "
    "publish salary bands by September and launch a mentoring programme.",
]

PASSAGES_OTHER = [
    "Le gouvernement a annoncé mardi un plan de 2 milliards d'euros pour rénover les écoles. Les travaux commenceront "
    "en septembre et concerneront d'abord les bâtiments les plus anciens. Les syndicats saluent la mesure mais jugent le montant insuffisant.",
    "La empresa Solaria abrió una nueva planta en Sevilla que producirá paneles solares para 200.000 hogares al año. "
    "La inversión fue de 150 millones de euros y creará 400 empleos directos.",
    "Die Bahn meldet für das erste Halbjahr 2024 einen Verlust von 1,2 Milliarden Euro. Gründe seien Streiks, hohe "
    "Energiekosten und Investitionen in das Schienennetz. Der Vorstand erwartet eine Besserung im nächsten Jahr.",
    "O festival de cinema de Gramado recebeu 45 filmes este ano. O prêmio principal foi para um documentário sobre "
    "comunidades ribeirinhas da Amazônia, dirigido por Ana Souza.",
    "Il comune di Torino ha approvato un nuovo piano per il verde urbano: 5.000 alberi saranno piantati entro il 2026, "
    "soprattutto nei quartieri periferici. Il costo previsto è di 8 milioni di euro.",
    "据报道，该公司第二季度营收增长了百分之十五，主要得益于海外市场的扩张。公司计划明年在东南亚新建两座工厂。",
    "東京都は来年度から公立小学校の給食費を無償化すると発表した。対象はおよそ60万人で、費用は年間約300億円になる見込みだ。",
    "Компания объявила о запуске нового сервиса доставки продуктов в Казани. Заказы будут доставляться за 30 минут, "
    "а в первый месяц доставка будет бесплатной.",
]

# Each family: (complexity, template). Slots in {braces}; {passage} is filled with given text.
TEMPLATES: dict[str, list[tuple[str, str]]] = {
    "coding": [
        ("easy", "Write a {plang} function that {small_code}."),
        ("easy", "how do i {small_code} in {plang}"),
        ("easy", "Quick one: {plang} snippet that {small_code}?"),
        ("easy", "What does this {plang} error mean? {error}"),
        ("easy", "Explain {concept_code} in {plang} with a tiny example."),
        ("standard", "Write a {plang} module that {mid_code}. Include type hints and a couple of unit tests."),
        ("standard", "I'm getting `{error}` from this code, can you fix it?\n\n```\n{snippet}\n```"),
        ("standard", "Review this code and suggest improvements:\n```\n{snippet}\n```"),
        ("standard", "Refactor the following into idiomatic {plang}:\n{snippet}"),
        ("standard", "Implement a class in {plang} that {mid_code}, and explain the design choices briefly."),
        ("standard", "Write a SQL query that returns the top 5 customers by total order value in the last 90 days, given tables orders and customers."),
        ("standard", "Convert this snippet to {plang} and keep the behaviour identical:\n```\n{snippet}\n```"),
        ("hard", "Design and implement {hard_code} in {plang}. It must handle edge cases, be thread-safe, and come with tests and a complexity analysis."),
        ("hard", "Our service intermittently fails with `{error}` under load, only in production. Here is the handler:\n```\n{snippet}\n```\nWalk through possible race conditions, propose a fix, and write a regression test that reproduces it deterministically."),
        ("hard", "Implement {hard_code} in {plang}. Optimize for throughput, avoid global locks, and explain the memory-ordering guarantees you rely on."),
        ("hard", "Write a {plang} library that {mid_code}, supports pluggable storage backends, streams input larger than memory, and exposes an async API. Include benchmarks and document the trade-offs."),
        ("easy", "Écris une fonction {plang} qui {small_code_fr}."),
        ("standard", "Escribe un programa en {plang} que {mid_code_es}, con pruebas unitarias."),
        ("standard", "Schreibe eine {plang}-Funktion, die {mid_code_de}, und erkläre den Code."),
        ("easy", "Como faço para {small_code_pt} em {plang}?"),
        ("standard", "Correggi questo codice, dà l'errore `{error}`:\n```\n{snippet}\n```"),
        ("easy", "用{plang}写一个函数，{small_code_zh}。"),
        ("standard", "この{plang}のコードのバグを直してください：\n```\n{snippet}\n```"),
        ("hard", "Реализуйте на {plang} {hard_code_ru}, с тестами и анализом сложности."),
    ],
    "maths": [
        ("easy", "What is {a} times {b}?"),
        ("easy", "What is {percent} of {a}?"),
        ("easy", "Compute {a} + {b} * {b}."),
        ("easy", "Solve for x: {b}x + {a} = {a}{b}"),
        ("easy", "What's the derivative of {fn_expr}?"),
        ("easy", "Is {a} a prime number?"),
        ("standard", "Integrate {fn_expr} with respect to x and show your work."),
        ("standard", "{person} has {a} {item} and gives away {percent} of them, then buys {b} more. How many does {person} have now? Show the calculation."),
        ("standard", "A car travels {a} km in {b} hours, then {b} km in {a} minutes. What is its average speed for the whole trip?"),
        ("standard", "Find the eigenvalues of the matrix [[{b}, 1], [1, {b}]]."),
        ("standard", "What is the probability of getting at least two heads in {b} fair coin tosses?"),
        ("standard", "Solve the system: {b}x + y = {a}, x - y = {b}."),
        ("standard", "A loan of ${a}000 at {percent} annual interest compounded monthly: what is the balance after {b} years?"),
        ("hard", "Prove that {proof_claim}."),
        ("hard", "Prove rigorously that {proof_claim}, and explain where each assumption is used."),
        ("hard", "Let f(x) = {fn_expr}. Find all critical points, classify them, and prove that your list is complete."),
        ("hard", "How many ways can {a} identical {item} be distributed among {b} children so that each child gets at least one and no child gets more than {b}? Derive a closed form."),
        ("hard", "Evaluate the limit as n goes to infinity of (1 + {b}/n)^(n) and prove the result using the definition of e."),
        ("hard", "Find all integer solutions of x^2 - {b}y^2 = 1 with x, y < 1000 and prove there are infinitely many."),
        ("easy", "Combien font {a} fois {b} ?"),
        ("standard", "Resuelve la ecuación {b}x² - {a}x + {b} = 0 y explica los pasos."),
        ("standard", "Berechne das Integral von {fn_expr} von 0 bis 1."),
        ("hard", "Dimostra che {proof_claim_it}."),
        ("easy", "Quanto é {percent} de {a}?"),
        ("standard", "计算 {a} 乘以 {b} 再加上 {a} 的平方。"),
        ("standard", "{a}の{percent}はいくつですか？計算過程も示してください。"),
        ("hard", "Докажите, что {proof_claim_ru}."),
    ],
    "reasoning": [
        ("easy", "If all bloops are razzies and all razzies are lazzies, are all bloops lazzies?"),
        ("easy", "{person} is taller than {person2}, and {person2} is taller than {person3}. Who is the shortest?"),
        ("easy", "Which weighs more, a kilo of feathers or a kilo of bricks?"),
        ("easy", "Should I pick {option_a} or {option_b} for a small side project? Just a quick gut call."),
        ("standard", "Solve this puzzle: {puzzle_thing}. Explain your reasoning."),
        ("standard", "Compare {option_a} and {option_b} for a team of eight. What are the trade-offs?"),
        ("standard", "Plan {planning}. Give me a day-by-day schedule."),
        ("standard", "Someone argues that {claim}. What are the weaknesses in this argument?"),
        ("standard", "Five friends sit in a row. {person} is not at either end, {person2} sits next to {person3}, and {person4} is to the left of everyone else. Who could be in the middle?"),
        ("standard", "I have three job offers: one pays more, one is remote, one has better growth. How should I think about choosing?"),
        ("hard", "We are choosing between {option_a} and {option_b}. Constraints: a team of four, a launch in three months, strict compliance rules, and unpredictable traffic. Analyse the trade-offs step by step, identify hidden risks, and make a recommendation with the assumptions that would change it."),
        ("hard", "Evaluate the argument that {claim}. Identify each premise, check whether the conclusion follows, name any fallacies, and construct the strongest counterargument."),
        ("hard", "Plan {planning} under these constraints: the budget cannot exceed a fixed amount, two people are unavailable on alternate days, and every task depends on the previous one. Find an optimal order and justify why no better schedule exists."),
        ("hard", "Solve: {puzzle_thing}, but now with the extra rule that one statement may be false. Work through every case systematically and show which solutions remain."),
        ("standard", "Quels sont les avantages et inconvénients de {option_a_fr} par rapport à {option_b_fr} ?"),
        ("standard", "Tengo que decidir entre {option_a_es} y {option_b_es}. ¿Qué factores debería considerar?"),
        ("easy", "Wenn alle Katzen Tiere sind und einige Tiere schwarz sind, sind dann alle Katzen schwarz?"),
        ("standard", "Aiutami a pianificare {planning_it}, tenendo conto dei vincoli di tempo."),
        ("hard", "Analise passo a passo os prós e contras de {option_a_pt} versus {option_b_pt} para uma startup e recomende uma opção."),
        ("standard", "三个人中只有一个说真话。甲说乙在说谎，乙说丙在说谎，丙说甲和乙都在说谎。谁说的是真话？"),
        ("standard", "{option_a_ja}と{option_b_ja}のどちらを選ぶべきか、メリットとデメリットを比較してください。"),
        ("hard", "Проанализируйте аргумент: «{claim_ru}». Найдите логические ошибки и предложите контраргументы."),
    ],
    "factual": [
        ("easy", "What is the capital of {country}?"),
        ("easy", "Who was {person_fact}?"),
        ("easy", "When was {invention} invented?"),
        ("easy", "What is {fact_thing}?"),
        ("easy", "How tall is Mount Everest?"),
        ("easy", "What language do people speak in {country}?"),
        ("standard", "Explain {fact_thing} in simple terms."),
        ("standard", "How does {fact_thing} work? Give an overview for a curious teenager."),
        ("standard", "What were the main causes and consequences of {fact_thing}?"),
        ("standard", "Why is {person_fact} considered important in history?"),
        ("standard", "Explain the difference between weather and climate."),
        ("standard", "How did {invention} change everyday life?"),
        ("hard", "Explain {fact_thing} in depth for a graduate student: the underlying mechanisms, the main open questions, and how current evidence supports or contradicts the leading theories."),
        ("hard", "Give a detailed, historically precise account of {fact_thing}, covering the key actors, the timeline, competing interpretations by historians, and the long-term effects."),
        ("hard", "Compare how {country} and {country2} structure their healthcare, tax and education systems, with specific figures and the historical reasons for the differences."),
        ("easy", "Quelle est la capitale du {country_fr} ?"),
        ("easy", "¿Quién fue {person_fact}?"),
        ("standard", "Erkläre mir, wie {fact_thing_de} funktioniert."),
        ("standard", "O que é {fact_thing_pt} e por que é importante?"),
        ("easy", "Chi ha inventato {invention_it}?"),
        ("standard", "什么是{fact_thing_zh}？请简单解释一下。"),
        ("easy", "{country_ja}の首都はどこですか？"),
        ("standard", "Расскажите, что такое {fact_thing_ru}."),
    ],
    "writing": [
        ("easy", "Write a haiku about {writing_topic}."),
        ("easy", "Give me a catchy slogan for {writing_topic}."),
        ("easy", "Write a two-line birthday message for {person}."),
        ("easy", "Write a tweet announcing {writing_topic}."),
        ("standard", "Write an email to {audience} about {writing_topic}. Keep it polite and under 150 words."),
        ("standard", "Draft a LinkedIn post about {writing_topic}."),
        ("standard", "Write a short {genre} story about {writing_topic}."),
        ("standard", "Write a cover letter for a junior designer role at a small studio."),
        ("standard", "Compose a poem about {writing_topic} in the style of a sea shanty."),
        ("standard", "Write a product description for a reusable water bottle aimed at hikers."),
        ("standard", "Draft a blog post introduction about {writing_topic} for {audience}."),
        ("hard", "Write a 2,000-word {genre} story about {writing_topic} with three point-of-view characters, a non-linear timeline, and an ending that recontextualises the opening scene."),
        ("hard", "Draft a persuasive op-ed arguing for {writing_topic_claim}. It must anticipate three counterarguments, cite the kind of evidence a sceptical editor would expect, and stay under 900 words."),
        ("hard", "Write a complete launch announcement for {writing_topic}: a press release, a customer email, three social posts with different tones, and an internal FAQ. Keep the messaging consistent and avoid jargon."),
        ("hard", "Write a sonnet about {writing_topic} in strict iambic pentameter with the rhyme scheme ABAB CDCD EFEF GG, and then a prose explanation of the imagery."),
        ("easy", "Écris un petit poème sur {writing_topic_fr}."),
        ("standard", "Redacta un correo a {audience_es} sobre {writing_topic_es}."),
        ("standard", "Schreibe einen kurzen Blogartikel über {writing_topic_de}."),
        ("standard", "Escreva uma mensagem de agradecimento para {audience_pt}."),
        ("easy", "Scrivi una breve poesia su {writing_topic_it}."),
        ("standard", "写一篇关于{writing_topic_zh}的短文。"),
        ("standard", "{writing_topic_ja}についてのブログ記事を書いてください。"),
        ("hard", "Напишите рассказ о {writing_topic_ru} с неожиданной концовкой и тремя персонажами."),
    ],
    "summarization": [
        ("easy", "Summarize this in one sentence:\n\n{passage}"),
        ("easy", "TL;DR please:\n{passage}"),
        ("easy", "{passage}\n\nGive me the gist in a few words."),
        ("standard", "Summarize the following text in three bullet points:\n\n{passage}"),
        ("standard", "Can you condense this for a busy executive?\n\n{passage}"),
        ("standard", "Write a short summary of the key points:\n\"\"\"\n{passage}\n\"\"\""),
        ("standard", "Here's an article:\n{passage}\nWhat are the main takeaways?"),
        ("hard", "Summarize the following documents for a board meeting. Produce a one-paragraph executive summary, then a section per document with the key figures, and finally list contradictions between the documents.\n\nDocument 1:\n{passage}\n\nDocument 2:\n{passage2}\n\nDocument 3:\n{passage3}"),
        ("hard", "Create a structured summary of the material below: the main claims, the evidence for each, the open questions, and a 50-word abstract. Do not add information that is not in the text.\n\n{passage}\n\n{passage2}\n\n{passage3}"),
        ("standard", "Résume ce texte en deux phrases :\n\n{passage_other}"),
        ("standard", "Resume el siguiente texto:\n\n{passage_other}"),
        ("standard", "Fasse den folgenden Text kurz zusammen:\n\n{passage_other}"),
        ("easy", "Faça um resumo curto:\n{passage_other}"),
        ("standard", "Riassumi questo testo in tre punti:\n{passage_other}"),
        ("standard", "请总结下面这段文字：\n{passage_other}"),
        ("standard", "次の文章を要約してください。\n{passage_other}"),
        ("standard", "Кратко перескажите этот текст:\n{passage_other}"),
    ],
    "extraction": [
        ("easy", "Extract all the email addresses from this text:\n{passage}"),
        ("easy", "List the dates mentioned here:\n{passage}"),
        ("standard", "Extract the {fields} from the following text and return them as JSON:\n\n{passage}"),
        ("standard", "Parse this into a JSON object with keys name, amount, date:\n{passage}"),
        ("standard", "From the text below, pull out every organisation and the role it plays. Output a table.\n\n{passage}"),
        ("standard", "Return JSON with fields \"people\", \"places\" and \"numbers\" found in:\n\"\"\"{passage}\"\"\""),
        ("standard", "{passage}\n\nExtract the {fields} as a list of key-value pairs."),
        ("hard", "Extract every entity from the documents below into JSON following this schema: {{\"entities\": [{{\"type\": \"person|org|money|date|location\", \"value\": str, \"source_doc\": int, \"context\": str}}]}}. Normalise dates to ISO 8601 and amounts to numbers with a currency code, deduplicate across documents, and flag conflicting values.\n\nDoc 1:\n{passage}\n\nDoc 2:\n{passage2}\n\nDoc 3:\n{passage3}"),
        ("hard", "Convert the following records into a CSV with columns id, party, amount, currency, due_date, validating each row and listing rows that cannot be parsed with the reason.\n\n{passage}\n\n{passage2}"),
        ("standard", "Extrais les noms, lieux et montants de ce texte au format JSON :\n{passage_other}"),
        ("standard", "Extrae las cifras y las fechas de este texto en formato JSON:\n{passage_other}"),
        ("standard", "Extrahiere alle Zahlen und Organisationen aus diesem Text als JSON:\n{passage_other}"),
        ("easy", "Extraia os nomes próprios deste texto:\n{passage_other}"),
        ("standard", "Estrai le entità (luoghi, numeri, date) da questo testo in JSON:\n{passage_other}"),
        ("standard", "从下面的文字中提取公司名称和数字，以JSON格式输出：\n{passage_other}"),
        ("standard", "次の文章から数字と組織名を抽出してJSONで出力してください。\n{passage_other}"),
        ("standard", "Извлеките из текста все числа и названия городов в формате JSON:\n{passage_other}"),
    ],
    "translation": [
        ("easy", "Translate to {lang_to}: {short_phrase}"),
        ("easy", "How do you say \"{short_phrase}\" in {lang_to}?"),
        ("easy", "{short_phrase} -> {lang_to} please"),
        ("standard", "Translate the following paragraph into {lang_to}, keeping the tone formal:\n\n{passage}"),
        ("standard", "Please translate this email into {lang_to}:\n\n{passage}"),
        ("standard", "Can you put this into natural-sounding {lang_to}?\n{passage}"),
        ("standard", "Translate this text into English:\n\n{passage_other}"),
        ("hard", "Translate the following into {lang_to} for publication. Preserve the legal meaning exactly, keep defined terms consistent, adapt dates and number formats to local conventions, and add translator's notes where a term has no direct equivalent.\n\n{passage}\n\n{passage2}"),
        ("hard", "Translate this marketing copy into {lang_to}, {lang_to2} and {lang_to3}. Localise idioms rather than translating them literally, keep each version under the original length, and explain your choices for the tagline.\n\n{passage}"),
        ("easy", "Traduis en anglais : {short_phrase_fr}"),
        ("easy", "Traduce al inglés: {short_phrase_es}"),
        ("standard", "Übersetze bitte ins Englische:\n{passage_other}"),
        ("easy", "Traduza para o inglês: {short_phrase_pt}"),
        ("standard", "Traduci in italiano questo testo:\n{passage}"),
        ("standard", "请把下面这段话翻译成英文：\n{passage_other}"),
        ("easy", "「{short_phrase}」を日本語に訳してください。"),
        ("standard", "Переведите на английский:\n{passage_other}"),
        ("standard", "Translate into {lang_to}:\n{passage_other}"),
    ],
    "chat": [
        ("easy", "hi"),
        ("easy", "Hello! How are you today?"),
        ("easy", "hey there"),
        ("easy", "Thanks, that was really helpful!"),
        ("easy", "Good morning :)"),
        ("easy", "What's {chat_topic} for you?"),
        ("easy", "Tell me something fun."),
        ("easy", "lol that's funny"),
        ("standard", "I've been feeling {feeling}. Any advice?"),
        ("standard", "What do you think about {chat_topic}?"),
        ("standard", "My friend forgot my birthday and I feel hurt. Should I say something?"),
        ("standard", "I can't decide what to do this weekend, any ideas?"),
        ("standard", "Let's just chat for a bit. How's your day going?"),
        ("standard", "I'm {feeling}. Can we talk?"),
        ("hard", "I've been {feeling} for months: I can't focus at work, I argue with my partner, and I've stopped seeing friends. I don't know where to start. Can you help me think through what is going on and what small steps I could take?"),
        ("hard", "My co-founder and I disagree about everything lately, the company is running out of money, and I feel responsible for our five employees. I need to talk this through honestly: what should I consider, and how do I have the conversation without destroying the friendship?"),
        ("easy", "Salut ! Ça va ?"),
        ("easy", "¡Hola! ¿Qué tal?"),
        ("easy", "Hallo, wie geht's dir?"),
        ("easy", "Oi, tudo bem?"),
        ("easy", "Ciao, come stai?"),
        ("easy", "你好！今天过得怎么样？"),
        ("easy", "こんにちは！元気ですか？"),
        ("easy", "Привет! Как дела?"),
        ("standard", "Je me sens {feeling_fr} en ce moment, tu as des conseils ?"),
        ("standard", "Estoy {feeling_es}, ¿me das algún consejo?"),
        ("standard", "Mir ist langweilig. Lass uns ein bisschen plaudern."),
        ("standard", "最近有点累，你有什么建议吗？"),
        ("standard", "Мне грустно сегодня. Поговоришь со мной?"),
    ],
}

TOOL_TEMPLATES: list[tuple[str, str]] = [
    ("easy", "{tool_ask}"),
    ("easy", "Please {tool_ask_lower}"),
    ("standard", "{tool_ask} Then summarise the result in one line."),
    ("standard", "{tool_ask} If it fails, try again and tell me what went wrong."),
    ("hard", "{tool_ask} After that, cross-check the result against our records, update the ticket, notify the owner, and schedule a follow-up only if the numbers differ by more than 5%."),
    ("hard", "Go through all open orders from last week, check each one's shipping status, refund the ones delayed by more than ten days, and email each affected customer with a personalised apology."),
    ("standard", "Quel temps fait-il à Lyon demain ?"),
    ("easy", "Reserva una mesa para dos a las nueve."),
    ("standard", "Schick eine E-Mail an Anna, dass das Meeting verschoben ist."),
    ("easy", "明天北京的天气怎么样？"),
]

TRANSLATED_SLOTS: dict[str, list[str]] = {
    "small_code_fr": ["inverse une chaîne", "vérifie si un nombre est pair", "compte les voyelles d'un mot", "trie une liste de nombres"],
    "mid_code_es": ["lea un archivo CSV y agrupe las filas por columna", "implemente una caché LRU", "valide direcciones de correo"],
    "mid_code_de": ["eine CSV-Datei einliest und nach Spalten gruppiert", "einen LRU-Cache implementiert", "E-Mail-Adressen validiert"],
    "small_code_pt": ["inverter uma string", "ordenar uma lista", "ler um arquivo JSON"],
    "small_code_zh": ["反转一个字符串", "判断一个数是否为质数", "计算列表的平均值"],
    "hard_code_ru": ["неблокирующую очередь для нескольких потоков", "распределённый ограничитель частоты запросов", "B-дерево с поиском по диапазону"],
    "proof_claim_it": ["esistono infiniti numeri primi", "la radice quadrata di 2 è irrazionale", "la somma dei primi n numeri dispari è n^2"],
    "proof_claim_ru": ["простых чисел бесконечно много", "корень из двух иррационален", "сумма углов треугольника равна 180 градусам"],
    "option_a_fr": ["la location", "le télétravail", "une voiture électrique"],
    "option_b_fr": ["l'achat", "le bureau", "une voiture hybride"],
    "option_a_es": ["estudiar un máster", "aceptar el trabajo en Madrid", "comprar una casa"],
    "option_b_es": ["empezar a trabajar", "quedarme en Valencia", "seguir alquilando"],
    "planning_it": ["un viaggio di tre giorni a Napoli", "il trasloco in un nuovo appartamento", "lo studio per tre esami"],
    "option_a_pt": ["construir uma equipe própria", "usar nuvem pública"],
    "option_b_pt": ["terceirizar o desenvolvimento", "manter servidores próprios"],
    "option_a_ja": ["賃貸", "リモートワーク", "電気自動車"],
    "option_b_ja": ["持ち家", "オフィス勤務", "ガソリン車"],
    "claim_ru": ["все политики лгут, поэтому голосовать бессмысленно", "если продажи выросли после рекламы, значит реклама сработала"],
    "country_fr": ["Canada", "Portugal", "Japon", "Brésil", "Maroc"],
    "fact_thing_de": ["die Photosynthese", "die Inflation", "das Immunsystem", "ein Kernkraftwerk"],
    "fact_thing_pt": ["a fotossíntese", "a inflação", "um buraco negro", "o efeito estufa"],
    "invention_it": ["il telefono", "la stampa", "la radio", "la penicillina"],
    "fact_thing_zh": ["通货膨胀", "光合作用", "区块链", "黑洞"],
    "country_ja": ["フランス", "ブラジル", "カナダ", "エジプト"],
    "fact_thing_ru": ["инфляция", "фотосинтез", "чёрная дыра", "блокчейн"],
    "writing_topic_fr": ["la mer", "l'automne", "un vieux chat", "la ville la nuit"],
    "audience_es": ["mi jefe", "un cliente", "el casero"],
    "writing_topic_es": ["un retraso en la entrega", "una subida de precios", "una reunión de equipo"],
    "writing_topic_de": ["nachhaltiges Reisen", "den ersten Arbeitstag", "Kaffee am Morgen"],
    "audience_pt": ["meus colegas", "um cliente", "minha professora"],
    "writing_topic_it": ["la primavera", "il mare d'inverno", "una vecchia casa"],
    "writing_topic_zh": ["秋天", "家乡", "友谊"],
    "writing_topic_ja": ["旅行", "新しいカフェ", "春の花"],
    "writing_topic_ru": ["старый маяк", "потерянное письмо", "зимний лес"],
    "writing_topic_claim": ["a four-day work week", "free public transport", "banning phones in schools"],
    "short_phrase_fr": ["Où est la gare ?", "Merci beaucoup pour votre aide.", "La réunion est annulée."],
    "short_phrase_es": ["¿Dónde está el baño?", "Muchas gracias por todo.", "El tren sale a las ocho."],
    "short_phrase_pt": ["Bom dia, tudo bem?", "Onde fica o hotel?", "Obrigado pela ajuda."],
    "feeling_fr": ["stressé", "fatigué", "un peu seul"],
    "feeling_es": ["cansado", "aburrido", "un poco triste"],
}


def _fill(template: str, rng: random.Random) -> str:
    """Fill every {slot} of a template with a random value."""
    values: dict[str, str] = {}
    for _, name, _, _ in string.Formatter().parse(template):
        if name is None or name in values:
            continue
        values[name] = _slot_value(name, rng, values)
    return template.format(**values)


def _slot_value(name: str, rng: random.Random, chosen: dict[str, str]) -> str:
    """Return a value for one slot, keeping numbered variants distinct from their base slot."""
    base = name.rstrip("0123456789")
    if base == "passage":
        return rng.choice(PASSAGES)
    if base == "passage_other":
        return rng.choice(PASSAGES_OTHER)
    if base == "tool_ask_lower":
        ask = rng.choice(SLOTS["tool_ask"])
        return ask[0].lower() + ask[1:]
    pool = {"person": SLOTS["person"], "country": SLOTS["country"], "lang_to": SLOTS["lang_to"]}.get(base)
    if pool is None:
        pool = SLOTS.get(base) or TRANSLATED_SLOTS[base]
    options = [value for value in pool if value not in chosen.values()] or pool
    return rng.choice(options)


def _example(
    task: str, complexity: str, user: str, rng: random.Random, *, has_tools: bool = False, source: str = "hand"
) -> dict:
    """Return one training record."""
    record = {"system": rng.choice(SYSTEMS), "user": user, "task": task, "complexity": complexity, "source": source}
    if has_tools:
        record["has_tools"] = True
    return record


def generate(seed: int = SEED) -> list[dict]:
    """Return the deterministic list of training records."""
    rng = random.Random(seed)
    records: list[dict] = []
    for task, templates in TEMPLATES.items():
        seen: set[str] = set()
        for complexity, template in templates:
            kept = 0
            for _ in range(PER_TEMPLATE * 4):
                user = _fill(template, rng)
                if user in seen:
                    continue
                seen.add(user)
                records.append(_example(task, complexity, user, rng, source="template"))
                kept += 1
                if kept >= PER_TEMPLATE:
                    break
    for attempt in range(120):
        complexity, template = TOOL_TEMPLATES[attempt % len(TOOL_TEMPLATES)]
        records.append(_example("tool_use", complexity, _fill(template, rng), rng, has_tools=True, source="template"))
    seen_hand: set[str] = set()
    for task, complexity, user in [*HANDWRITTEN, *handwritten_load()] * HANDWRITTEN_WEIGHT:
        if user in seen_hand:
            continue
        seen_hand.add(user)
        records.append(_example(task, complexity, user, rng))
    rng.shuffle(records)
    return decontaminate(records)


def _normalise(text: str) -> str:
    """Return text lower-cased with whitespace collapsed, for duplicate checks."""
    return " ".join(text.lower().split())


def decontaminate(records: list[dict], heldout_path: Path = HELDOUT_PATH) -> list[dict]:
    """Drop training records whose prompt equals a held-out prompt (short generic prompts collide by chance)."""
    if not heldout_path.exists():
        return records
    with heldout_path.open(encoding="utf-8") as handle:
        heldout = {_normalise(json.loads(line)["user"]) for line in handle if line.strip()}
    kept = [record for record in records if _normalise(record["user"]) not in heldout]
    if len(kept) < len(records):
        print(f"dropped {len(records) - len(kept)} training prompts identical to held-out prompts")
    return kept


def handwritten_load(directory: Path = HAND_DIR) -> list[tuple[str, str, str]]:
    """Read the hand-written prompts in data/hand/*.txt ("@ family band" headers, one prompt a line, \\n escapes)."""
    examples: list[tuple[str, str, str]] = []
    for path in sorted(directory.glob("*.txt")):
        task = complexity = ""
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("@ "):
                task, complexity = line[2:].split()
                continue
            if not task:
                raise ValueError(f"{path}: prompt before any '@ family band' header")
            examples.append((task, complexity, line.strip().replace("\\n", "\n")))
    return examples


HANDWRITTEN: list[tuple[str, str, str]] = [
# chat
("chat", "easy", "sup"), ("chat", "easy", "heyyy"), ("chat", "easy", "morning! slept well?"), ("chat", "easy", "Nice talking to you :)"),
("chat", "easy", "I'm back!"), ("chat", "easy", "You're funny."), ("chat", "easy", "ugh mondays"), ("chat", "easy", "What's your name?"),
("chat", "easy", "I just finished my first marathon!!!"), ("chat", "easy", "Do you ever get tired?"), ("chat", "easy", "cool cool, talk later"),
("chat", "easy", "Merci, t'es super !"), ("chat", "easy", "Gracias, eres genial."), ("chat", "easy", "Danke, du bist toll!"),
("chat", "easy", "Obrigado, você é demais!"), ("chat", "easy", "Grazie mille, sei gentilissimo."), ("chat", "easy", "谢谢你，你真好！"),
("chat", "easy", "ありがとう、助かったよ！"), ("chat", "easy", "Спасибо, ты лучший!"), ("chat", "easy", "Bonne nuit, à demain !"),
("chat", "easy", "Do you like dogs?"), ("chat", "easy", "I'm so excited for my vacation next week"), ("chat", "easy", "What are you up to?"),
("chat", "standard", "I feel like I never have time for myself. Work, kids, chores. How do other people manage?"),
("chat", "standard", "I'm nervous about meeting my girlfriend's parents this weekend. Any tips?"),
("chat", "standard", "My cat died yesterday and the house feels empty."),
("chat", "standard", "Do you think it's okay to skip a friend's party if I'm just not in the mood?"),
("chat", "standard", "I keep procrastinating on everything. I know what to do but I don't do it. Ugh."),
("chat", "standard", "What's something that always cheers you up? I need ideas, rough day."),
("chat", "standard", "I'm thinking of learning the guitar at 40. Silly or not?"),
("chat", "standard", "How do I tell a friend I need some space without hurting her?"),
("chat", "standard", "I had an awkward moment at work today and can't stop replaying it in my head."),
("chat", "standard", "Tengo miedo de hablar en público la semana que viene. ¿Algún consejo para calmar los nervios?"),
("chat", "standard", "Je n'arrive pas à me motiver pour faire du sport. Tu as des idées ?"),
("chat", "standard", "Ich vermisse meine Familie, seit ich ins Ausland gezogen bin."),
("chat", "standard", "Mi sento un po' giù oggi, mi tiri su il morale?"),
("chat", "standard", "Meu namorado esqueceu nosso aniversário de namoro. Devo ficar chateada?"),
("chat", "standard", "最近工作压力很大，晚上总是想东想西，怎么办？"),
("chat", "standard", "友達とケンカしちゃった。どうやって仲直りすればいいかな？"),
("chat", "standard", "У меня завтра первый день на новой работе, очень волнуюсь."),
("chat", "hard", "I've been in therapy for a year, things are better, but lately the old anxiety is creeping back and I'm scared of sliding. I'd like to talk through what I notice day to day, what might be triggering it, and what I could bring up with my therapist next session."),
("chat", "hard", "My teenage son barely talks to me anymore. He's polite but closed off, spends all his time gaming, and his grades are slipping. My ex and I disagree on how strict to be. I want to think this through with you honestly — what might be going on for him, what I might be doing wrong, and how to reconnect."),
# extraction
("extraction", "easy", "Find the phone number: 'Call us at 555-0134 between 9 and 5.'"),
("extraction", "easy", "What's the invoice number in 'Ref: INV-77821, due 03/04'?"),
("extraction", "easy", "Pull out the URL from this: 'Docs are at https://docs.example.org/start, see section 2.'"),
("extraction", "easy", "Which cities are mentioned? 'We flew from Lima to Bogotá and then took a bus to Medellín.'"),
("extraction", "easy", "Get the person's name from: 'Signed, Dr. Helen Park, Chief Medical Officer.'"),
("extraction", "easy", "Give me only the numbers in: 'Room 12 has 4 beds and 2 windows.'"),
("extraction", "easy", "What time is the appointment? 'Your appointment is confirmed for 14:30 on Thursday.'"),
("extraction", "easy", "Récupère l'adresse e-mail : « Écrivez-moi à claire.martin@orange.fr. »"),
("extraction", "easy", "Saca el número de pedido: 'Su pedido 99-4412 ha sido enviado.'"),
("extraction", "easy", "Welche Uhrzeit wird genannt? 'Der Zug fährt um 7:45 Uhr ab.'"),
("extraction", "easy", "Qual é o valor total? 'Total a pagar: R$ 349,90.'"),
("extraction", "easy", "请找出这句话里的日期：“会议定于2025年6月18日举行。”"),
("extraction", "easy", "Вытащи из текста номер телефона: «Звоните по номеру 8-800-555-35-35.»"),
("extraction", "standard", "Convert this contact card to JSON (name, company, title, email, phone): 'Marcus Lee | Head of Sales, Brightline Inc. | marcus@brightline.io | +1 415 555 0199'"),
("extraction", "standard", "From this job ad, extract role, location, salary range and required skills as JSON: 'We're hiring a Backend Engineer in Lisbon (remote-friendly). 55-70k EUR. Must know Go, PostgreSQL and Kubernetes.'"),
("extraction", "standard", "List every product and price from this menu as key-value pairs: 'Espresso 2.00, Latte 3.50, Bagel 2.80, Muffin 2.40'"),
("extraction", "standard", "Pull the flight details (airline, flight number, from, to, departure, arrival) out of this confirmation: 'Your flight LH 1234 with Lufthansa departs Frankfurt (FRA) at 08:15 and arrives in Madrid (MAD) at 10:50 on 5 May.'"),
("extraction", "standard", "Extract each medication with dose and frequency from this note as JSON: 'Patient takes metformin 500 mg twice daily, lisinopril 10 mg once daily, and aspirin 81 mg in the morning.'"),
("extraction", "standard", "Identify all the dates and what happens on each: 'Registration opens 1 Feb, early-bird ends 28 Feb, the conference runs 14-16 April, and videos go online on 1 May.'"),
("extraction", "standard", "Turn these lines into a JSON list of {name, score}: 'Ana - 91; Bruno - 78; Chen - 85; Dana - 66'"),
("extraction", "standard", "Return the sender, recipient, subject and any deadlines from this email as JSON:\nFrom: tom@acme.com\nTo: ops@acme.com\nSubject: Server upgrade\nPlease finish the upgrade by Friday 12th and send the report by Monday 15th."),
("extraction", "standard", "Extrais sous forme de tableau les noms des joueurs et leurs buts : « Mbappé a marqué deux fois, Griezmann une fois et Giroud a ajouté le dernier but. »"),
("extraction", "standard", "Saca en JSON los campos producto, cantidad y precio de: 'Compré 3 camisetas a 12 euros y 2 pantalones a 30 euros.'"),
("extraction", "standard", "Extrahiere Name, Geburtsdatum und Adresse als JSON: 'Anna Schmidt, geboren am 12.03.1990, wohnt in der Hauptstraße 5, 10115 Berlin.'"),
("extraction", "standard", "Estrai in formato JSON i nomi delle aziende e i fatturati: 'Nel 2023 Ferrari ha fatturato 5,9 miliardi e Luxottica 25 miliardi.'"),
("extraction", "standard", "从这段简历中提取姓名、学历和工作年限，输出JSON：“张伟，硕士，拥有八年软件开发经验。”"),
("extraction", "standard", "この文から人名と役職を抜き出してJSONにしてください：「田中社長と佐藤部長が会議に出席した。」"),
("extraction", "standard", "Извлеки в виде JSON название товара, цену и количество: «Купил 2 ноутбука по 85 000 рублей.»"),
("extraction", "hard", "Extract a normalized event timeline from these three witness statements into JSON (time, actor, action, source, confidence). Resolve relative times like 'ten minutes later' against explicit ones, and mark contradictions between witnesses.\nW1: At 9:05 the red van parked outside the bank. Ten minutes later two men went in.\nW2: I saw two men enter the bank at about 9:10, one carrying a bag.\nW3: The van was already there when I arrived at 9:00, and it left at 9:30."),
("extraction", "hard", "Parse these 5 bank transaction descriptions into JSON with date, merchant, category, amount, currency, and is_recurring. Infer categories from merchant names, convert amounts to decimals, and detect recurring payments across lines:\n02/01 NETFLIX.COM 15.49 USD\n02/03 UBER *TRIP 23.10 USD\n03/01 NETFLIX.COM 15.49 USD\n03/02 WHOLEFDS MKT #102 87.33 USD\n03/05 SPOTIFY P0A3 10.99 USD"),
# coding
("coding", "easy", "jq command to get all names from a JSON array of objects?"),
("coding", "easy", "How do I undo the last git commit but keep my changes?"),
("coding", "easy", "what's a python list comprehension"),
("coding", "easy", "CSS: center a div horizontally and vertically."),
("coding", "easy", "How to check the installed version of numpy?"),
("coding", "easy", "What's the difference between let and var?"),
("coding", "easy", "Explain what a foreign key is in SQL."),
("coding", "easy", "npm or yarn, which command installs dev dependencies only?"),
("coding", "easy", "¿Qué hace la palabra clave 'yield' en Python?"),
("coding", "easy", "Comment supprimer une branche git distante ?"),
("coding", "easy", "Wie kopiere ich ein Array in JavaScript?"),
("coding", "easy", "Python で辞書をJSON文字列に変換する方法は？"),
("coding", "easy", "Как в bash проверить, существует ли файл?"),
("coding", "standard", "My Flask app returns 500 when the form is empty. Here's the handler:\n@app.post('/save')\ndef save():\n    n = int(request.form['count'])\n    return str(n * 2)\nHow should I handle missing or non-numeric input?"),
("coding", "standard", "Write a bash script that backs up /var/www to S3 every night and keeps only the last 7 backups."),
("coding", "standard", "Convert this callback-based Node code to async/await:\nfs.readFile('a.txt', (err, data) => { if (err) throw err; console.log(data.toString()); });"),
("coding", "standard", "Set up a Postgres table for blog posts with tags (many-to-many) and write the query to get posts with a given tag, newest first."),
("coding", "standard", "Write a React hook useLocalStorage(key, initial) that syncs state with localStorage and handles JSON parse errors."),
("coding", "standard", "Why is my Python multiprocessing code slower than the single-process version? I'm passing a big DataFrame to each worker."),
("coding", "standard", "Implémente une file de priorité en Java avec un tas binaire et explique la complexité des opérations."),
("coding", "standard", "Escribe un script de Python que descargue todas las imágenes de una página web dada."),
("coding", "standard", "Scrivi una query SQL che trovi i clienti che non hanno fatto ordini negli ultimi sei mesi."),
("coding", "standard", "用 Go 写一个简单的 HTTP 服务器，提供 /health 和 /echo 两个接口。"),
("coding", "hard", "Design the database schema and write the core code for a multi-tenant permissions system with roles, resource-level overrides and inheritance across folders. Queries must stay fast for 10 million resources; explain indexes, caching and how you'd invalidate caches when permissions change."),
("coding", "hard", "Our Kafka consumers lag behind during peak hours even though CPU is at 30%. Explain how partitioning, consumer group rebalancing, batch sizes and commit strategies interact, and rewrite the consumer in Java to process in parallel while preserving per-key ordering and at-least-once delivery."),
# reasoning
("reasoning", "easy", "If no fish can fly and a salmon is a fish, can a salmon fly?"),
("reasoning", "easy", "Which is the odd one out: apple, banana, carrot, grape?"),
("reasoning", "easy", "My flight lands at 5 and the concert starts at 6 across town. Is it realistic to make it? Quick take."),
("reasoning", "easy", "Is 'everyone I know likes it, so everyone likes it' a good argument?"),
("reasoning", "easy", "A is next to B, B is next to C, and there are only three seats in a row. Who sits in the middle?"),
("reasoning", "easy", "Si Marta llega siempre antes que Luis, y Luis antes que Ana, ¿quién llega última?"),
("reasoning", "easy", "Tutti i gatti sono mammiferi. Fufi è un mammifero. Fufi è per forza un gatto?"),
("reasoning", "standard", "Should a small bakery spend its marketing budget on Instagram ads or on a loyalty card program? Reason it out for me."),
("reasoning", "standard", "Three switches outside a room control three bulbs inside. You can enter the room only once. How can you tell which switch controls which bulb?"),
("reasoning", "standard", "A study found that people who drink coffee live longer. My friend says coffee makes you live longer. What could be wrong with that conclusion?"),
("reasoning", "standard", "I need to schedule three interviews on Tuesday: each takes an hour, the candidate from Berlin can only do mornings, the panel lunches 12-1, and the room is booked 3-4. Propose a schedule and explain it."),
("reasoning", "standard", "What are the pros and cons of letting employees choose their own working hours in a customer-support team?"),
("reasoning", "standard", "Est-ce une bonne idée de prendre une année sabbatique avant de commencer mes études ? Pèse le pour et le contre."),
("reasoning", "standard", "Ist es sinnvoller, ein E-Auto zu kaufen oder noch fünf Jahre mit dem alten Diesel zu fahren? Wäge die Argumente ab."),
("reasoning", "standard", "Vale mais a pena alugar um apartamento perto do trabalho ou comprar um mais longe? Analise os prós e contras."),
("reasoning", "standard", "你有两根绳子，每根烧完需要一个小时，但燃烧不均匀。怎样用它们测出45分钟？"),
("reasoning", "standard", "旅行の予定を立てたい。3日間で京都と大阪と奈良を回るには、どういう順番が効率的か理由とともに考えて。"),
("reasoning", "standard", "Что выгоднее для небольшой команды: нанять одного опытного разработчика или двух начинающих? Порассуждай."),
("reasoning", "hard", "A city must choose between expanding its airport, building a high-speed rail link, or doing nothing, with a fixed budget and a 2040 climate target. Lay out the decision framework, the key uncertainties, how different stakeholder priorities change the answer, and what evidence would most reduce uncertainty."),
("reasoning", "hard", "Examine this argument carefully: 'Since every previous technological revolution created more jobs than it destroyed, AI will also create more jobs than it destroys.' Break it into premises, evaluate the inductive strength, identify disanalogies, and say what would have to be true for the conclusion to hold."),
# factual
("factual", "easy", "What's the largest ocean on Earth?"), ("factual", "easy", "Who discovered gravity?"),
("factual", "easy", "How many players are on a soccer team?"), ("factual", "easy", "What is the chemical symbol for gold?"),
("factual", "easy", "Where is the Eiffel Tower?"), ("factual", "easy", "Who painted Starry Night?"),
("factual", "easy", "What's the speed of light?"), ("factual", "easy", "Which country has the biggest population?"),
("factual", "easy", "¿En qué año llegó el hombre a la Luna?"), ("factual", "easy", "Qui a écrit Les Misérables ?"),
("factual", "easy", "Wer hat die Relativitätstheorie entwickelt?"), ("factual", "easy", "Qual é a capital da Austrália?"),
("factual", "easy", "Qual è il fiume più lungo d'Italia?"), ("factual", "easy", "世界上最高的山是哪座？"),
("factual", "easy", "日本で一番長い川は何ですか？"), ("factual", "easy", "Кто написал «Войну и мир»?"),
("factual", "standard", "How do airplanes stay in the air?"), ("factual", "standard", "Why do we have leap years?"),
("factual", "standard", "What's the difference between a hurricane and a tornado?"),
("factual", "standard", "How does compound interest work? Explain with the intuition, not formulas."),
("factual", "standard", "What happened during the Cuban Missile Crisis?"),
("factual", "standard", "Why do cats purr?"),
("factual", "standard", "¿Cómo funciona una vacuna? Explícamelo de forma sencilla."),
("factual", "standard", "Comment fonctionne une centrale nucléaire ?"),
("factual", "standard", "Warum ist das Meer salzig?"),
("factual", "standard", "Como funciona a internet, de forma simples?"),
("factual", "standard", "为什么月亮会有圆缺变化？"),
("factual", "standard", "Почему листья осенью желтеют?"),
("factual", "hard", "Explain in depth how the transformer architecture works: self-attention, multi-head attention, positional encodings, layer normalisation, and why it replaced recurrent networks, including the computational trade-offs."),
("factual", "hard", "Give a thorough account of the causes of the 1929 Wall Street Crash and the Great Depression, comparing monetarist and Keynesian explanations and the evidence for each."),
# writing
("writing", "easy", "Write a short poem about the moon."), ("writing", "easy", "Give me a funny name for a fantasy football team."),
("writing", "easy", "Write a sweet good-morning text for my wife."), ("writing", "easy", "Make up a riddle about a clock."),
("writing", "easy", "One-line toast for my parents' anniversary?"), ("writing", "easy", "Write a motivational quote about persistence."),
("writing", "easy", "Escribe un haiku sobre el invierno."), ("writing", "easy", "Écris une devise pour un club de lecture."),
("writing", "easy", "Schreib ein kurzes Gedicht über den Herbst."), ("writing", "easy", "写一首关于月亮的小诗。"),
("writing", "easy", "Напиши короткое поздравление с Новым годом."), ("writing", "easy", "Scrivi un augurio di buon compleanno per mio nonno."),
("writing", "standard", "Write an apology email to a customer whose order arrived two weeks late. Offer a 15% discount."),
("writing", "standard", "Draft a resignation letter that's gracious and short."),
("writing", "standard", "Write a short mystery story set on a night train."),
("writing", "standard", "Write a newsletter intro for our gardening club's spring edition."),
("writing", "standard", "Write a job posting for a part-time barista at a cosy neighbourhood café."),
("writing", "standard", "Escribe un cuento corto para niños sobre un dragón que tiene miedo a la oscuridad."),
("writing", "standard", "Rédige un e-mail pour demander une augmentation à mon responsable."),
("writing", "standard", "Schreibe eine Produktbeschreibung für handgemachte Seife."),
("writing", "standard", "Escreva um conto curto sobre um pescador e uma tempestade."),
("writing", "standard", "給料アップをお願いするメールを上司宛てに書いてください。"),
("writing", "hard", "Write a three-part short story cycle in which the same red umbrella passes between three strangers across thirty years; each part needs its own voice and era, and the final part must echo the first line of the first part."),
("writing", "hard", "Write a complete wedding speech for a best man who met the groom in the army, including a callback joke, a sincere middle section about loss, and a toast; about 900 words, avoiding clichés and in-jokes that guests wouldn't understand."),
# summarization
("summarization", "easy", "Summarize in one sentence: 'The team finished the redesign, but testing found three accessibility bugs, so the launch moves from Monday to Thursday.'"),
("summarization", "easy", "Short version please: 'Due to the storm, all flights after 6 pm are cancelled. Passengers will be rebooked automatically and notified by SMS.'"),
("summarization", "easy", "tldr: 'Our landlord says rent goes up 4% from July, the gym in the basement will close for repairs in June, and parking permits must be renewed by May 31.'"),
("summarization", "easy", "Give the gist: 'Scientists found that octopuses change colour while sleeping, which may suggest they dream, although researchers caution against assuming experiences like ours.'"),
("summarization", "standard", "Summarize this customer complaint for the support lead in three bullets: 'I've been a customer for six years. In March my plan was changed without notice, I was charged twice in April, and when I called, I waited 50 minutes and got disconnected. I want a refund for April and an explanation of the plan change, otherwise I'll cancel.'"),
("summarization", "standard", "Can you summarise this paragraph for a slide? 'Remote work adoption rose from 5% to 30% of workdays between 2019 and 2023. Productivity effects vary: fully remote teams report more focus time but weaker mentoring, while hybrid teams report the best balance. Office demand in city centres has fallen by about 15%.'"),
("summarization", "standard", "Résume ce courriel en trois points : « Bonjour à tous, la réunion de lundi est déplacée à mardi 10h. Merci d'envoyer vos chiffres avant vendredi. Le nouveau logiciel de comptabilité sera installé la semaine prochaine ; prévoyez une formation d'une heure. »"),
("summarization", "standard", "Resume este texto en tres frases: 'La ciudad aprobó un plan para plantar diez mil árboles. El objetivo es reducir la temperatura en verano y mejorar la calidad del aire. Los vecinos podrán proponer calles a través de una aplicación.'"),
("summarization", "standard", "Fasse diese E-Mail in einem Satz zusammen: 'Hallo Team, wegen der Grippewelle verschieben wir die Weihnachtsfeier auf den 10. Januar. Der Ort bleibt gleich. Bitte gebt bis Freitag Bescheid, ob ihr kommt.'"),
("summarization", "standard", "请用三点总结这段话：“公司决定明年起实行每周四天工作制。员工工资不变，但每天工作时间延长一小时。管理层希望借此提高员工满意度并降低离职率。”"),
("summarization", "hard", "Summarize the following project retrospective into: what went well, what went wrong, root causes, and action items with owners. Keep it faithful and flag anything ambiguous.\n\nWe shipped the mobile app three weeks late. Design handoff was smooth thanks to the shared component library. The API changed twice mid-sprint because backend priorities shifted, which broke the offline mode. QA started late since the test devices arrived late. Marketing was not told about the delay until a week before launch. Going forward: Ana wants API contracts frozen before sprint start; Luis will own a device lab; someone should send weekly status to marketing (not decided who)."),
# translation
("translation", "easy", "Translate 'where is the bathroom' into Italian."), ("translation", "easy", "How do you say 'I love you' in Korean?"),
("translation", "easy", "Spanish word for 'spoon'?"), ("translation", "easy", "Translate to English: 'Je ne sais pas.'"),
("translation", "easy", "What does 'Schadenfreude' mean in English?"), ("translation", "easy", "'Good evening' in Russian please."),
("translation", "easy", "Traduis « bonne chance » en espagnol."), ("translation", "easy", "Übersetze 'Guten Appetit' ins Französische."),
("translation", "easy", "Traduza 'saudade' para o inglês."), ("translation", "easy", "把“谢谢”翻译成日语。"),
("translation", "easy", "「おやすみなさい」を英語で言うと？"), ("translation", "easy", "Переведи слово «дружба» на английский."),
("translation", "standard", "Translate this text message to German: 'Running 10 minutes late, start without me, I'll bring the cake.'"),
("translation", "standard", "Please translate the following paragraph into Spanish: 'Thank you for choosing our hotel. Breakfast is served from 7 to 10 in the garden room. Please let reception know if you have any dietary requirements.'"),
("translation", "standard", "What does this Italian note say in English? 'Caro Paolo, ti lascio le chiavi sotto lo zerbino. Torno domenica sera. Innaffia le piante, per favore!'"),
("translation", "standard", "Traduis ce message en anglais pour un client : « Nous avons bien reçu votre commande et elle sera expédiée sous 48 heures. »"),
("translation", "standard", "Traduce este párrafo al alemán: 'Nuestra tienda estará cerrada por inventario el lunes. Disculpen las molestias.'"),
("translation", "standard", "请把这封邮件翻译成英文：“您好，附件是本月的报告，请查收。如有问题请随时联系我。”"),
("translation", "standard", "Переведи на французский: «Мы рады пригласить вас на открытие нашей выставки в субботу.»"),
("translation", "hard", "Translate this product safety warning into French, German and Italian for EU packaging. Terminology must match EU regulatory usage, warnings must keep their imperative force, and you must flag any sentence whose meaning could shift in translation:\n'WARNING: Choking hazard - small parts. Not for children under 3 years. Keep away from fire. Adult assembly required.'"),
("translation", "hard", "Translate the following song chorus into Spanish so that it can be sung to the same melody (same syllable count per line), keeping the meaning as close as possible, and explain any compromise:\n'Hold on, the night is young,\nthe city lights are calling out,\nwe'll dance until the morning comes\nand never wonder what it's about.'"),
]


def main() -> None:
    """Write data/train.jsonl."""
    records = generate()
    OUT_PATH.parent.mkdir(parents=True, exist_ok=True)
    with OUT_PATH.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {OUT_PATH}")


if __name__ == "__main__":
    main()
