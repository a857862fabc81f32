/*
 * corpus.c - the built-in English corpus that synthetic prompts are drawn from.
 *
 * Plain prose written for calibench (no third-party text): short essays on rivers,
 * cities, weather, work, machines and measurement, so prompts read like ordinary
 * writing, with common and uncommon words, numbers and punctuation, rather than one
 * repeated token. Each string is one sentence; the text model (textgen.c) cuts them
 * into words. Changing this text changes every synthetic prompt and every workload
 * hash, as it should.
 */
#include "workload_internal.h"

static const char *const sentences[] = {
    "The river leaves the hills in the early morning and reaches the town by noon.",
    "Along its banks the willows lean toward the water as if they were listening.",
    "In spring the current is fast and brown, carrying branches, leaves and the odd lost boot.",
    "By late summer it slows down, and children wade across the shallows without fear.",
    "An old stone bridge with seven arches joins the market square to the northern fields.",
    "Nobody in the village remembers who built it, although everyone has a story about it.",
    "The baker opens his shop at five, and the smell of fresh bread drifts down the lane.",
    "Most customers buy the same loaf every day, yet he still asks each of them what they want.",
    "A small library sits beside the post office, with a reading room that faces the garden.",
    "Its shelves hold atlases, cookbooks, train timetables and a surprising number of poems.",
    "On rainy afternoons the room fills with students who pretend to study and mostly watch the rain.",
    "The weather here changes quickly, so people carry a coat even when the sky looks clear.",
    "Clouds gather over the ridge around three o'clock and usually break up before dinner.",
    "Winter brings frost that paints the windows and makes the cobblestones treacherous.",
    "Farmers check the sky each evening and plan the next day according to the wind.",
    "A careful engineer measures twice, writes down the numbers, and only then draws conclusions.",
    "Good measurements are boring to collect and exciting to read, which is why they are rare.",
    "When a system is slow, the first question is not why but where the time actually goes.",
    "Queues form whenever work arrives faster than it can be served, even for a moment.",
    "A queue that is empty on average can still be long at the worst possible time.",
    "That is why the tail of a distribution matters more than its mean to the people who wait.",
    "If one request in a hundred takes ten seconds, a page that makes fifty requests is often slow.",
    "Engineers who have been surprised by this once tend to plot every percentile afterwards.",
    "The factory on the edge of town makes parts for bicycles, pumps and garden tools.",
    "Its machines run in two shifts, and the quiet hour between them is used for repairs.",
    "Each machine keeps a small notebook where the operators write what went wrong and when.",
    "Over the years those notebooks have become a history of the factory, written in pencil.",
    "A new manager once proposed replacing them with a database, and the operators politely ignored her.",
    "Later she learned to read the notebooks herself and found patterns nobody had noticed.",
    "The railway station is small but busy, with trains to the coast every forty minutes.",
    "Travelers sit on wooden benches under a clock that has run four minutes fast since 1987.",
    "Regular commuters simply subtract the difference, while visitors run for trains that are not leaving.",
    "In the waiting room a map of the old lines shows stations that closed long ago.",
    "Some of their names survive as street names, bus stops and the occasional pub.",
    "A good teacher explains an idea three ways, because each student hears it differently.",
    "The first explanation uses pictures, the second uses numbers, and the third uses a story.",
    "Students remember the story, understand the numbers, and copy the pictures into their notes.",
    "Learning something well usually means being confused for a while and staying curious anyway.",
    "The orchard behind the school grows apples, pears and a single stubborn plum tree.",
    "Every autumn the pupils pick the fruit, weigh it, and argue about which tree did best.",
    "Last year the plum tree produced more fruit than ever, and nobody could explain why.",
    "A weather station on the school roof records temperature, pressure and rainfall every minute.",
    "The data goes into a spreadsheet that now has more rows than anyone wants to scroll through.",
    "From it the pupils have learned that the coldest hour is just before sunrise, not at midnight.",
    "Computers are patient in a way that people are not, but they are also literal to a fault.",
    "A program does exactly what it was told, which is rarely exactly what was meant.",
    "Most bugs live in the gap between those two things, quietly waiting for an unusual input.",
    "Testing is the habit of looking for that gap on purpose, before a user finds it by accident.",
    "A well written test describes what should happen in words that a newcomer can follow.",
    "When the test fails, the message should say what was expected and what was found instead.",
    "The harbor town to the south lives from fishing, ferries and a growing number of tourists.",
    "Boats leave before dawn and return in the afternoon, followed by hopeful gulls.",
    "On the quay an old man repairs nets with knots his grandfather taught him sixty years ago.",
    "Visitors photograph him constantly, and he has learned to pose without stopping his work.",
    "The ferry to the island takes forty minutes in calm weather and much longer in a storm.",
    "Its captain has crossed the strait more than twelve thousand times and still watches every wave.",
    "Cities grow in layers, each generation building on what the previous one left behind.",
    "Under a modern shop there may be a medieval cellar, and under that a Roman floor.",
    "Walking through an old city is a little like reading a book whose pages were glued together.",
    "Planners try to keep the best of the past while making room for people who live here now.",
    "Light travels from the sun to the earth in a little more than eight minutes.",
    "Sound is much slower, which is why thunder arrives several seconds after the flash.",
    "Counting the seconds and dividing by three gives a rough distance to the storm in kilometers.",
    "Children love this trick because it turns a frightening noise into a small calculation.",
    "A kitchen is a laboratory where the experiments are eaten, even when they fail.",
    "Bread needs time, warmth and patience, and it punishes anyone who tries to hurry it.",
    "Soup forgives almost everything, which makes it the first dish most cooks learn to trust.",
    "The secret of a good sauce is usually more salt, more butter, or more patience.",
    "Maps are arguments about what matters, drawn to look like simple statements of fact.",
    "A road map leaves out the hills, a hiking map leaves out the shops, and both are useful.",
    "The best map for a journey is the one that answers the question the traveler is asking.",
    "Old maps are full of guesses, coastlines that wander and mountains that never existed.",
    "Music fills the square on Friday evenings, when a brass band plays under the plane trees.",
    "The players are a dentist, two farmers, a retired pilot and a very serious teenager.",
    "They rehearse in the church hall and argue about tempo with the passion of experts.",
    "Nobody minds the wrong notes, because everyone is there for the company as much as the tunes.",
    "Why do some ideas spread quickly while others, just as good, are forgotten?",
    "Part of the answer is timing, and part is simply who happened to hear them first.",
    "The rest is luck, which is uncomfortable for people who prefer clean explanations.",
    "A forest changes slowly enough that each visit looks the same, and quickly enough to surprise.",
    "Fallen trees open gaps in the canopy, and within a few years young birches fill them.",
    "Foxes, owls and badgers share the woods at night, mostly by keeping out of each other's way.",
    "Walkers see little of this, but the tracks in the mud tell the whole story every morning.",
    "Patience is underrated in engineering, where the fastest fix is often the slowest in the end.",
    "Writing down what was tried, and why it failed, saves the next person a week of work.",
    "Simple designs survive because people can understand them when something goes wrong at night.",
    "Clever designs impress at first and then become expensive the moment their author leaves.",
};

const char *const *cb__corpus_sentences(size_t *n) {
  *n = sizeof sentences / sizeof sentences[0];
  return sentences;
}

uint64_t cb__corpus_hash(void) {
  cb__xxh64_state h;
  cb__xxh64_init(&h, 0);
  for (size_t i = 0; i < sizeof sentences / sizeof sentences[0]; i++) {
    const char *s = sentences[i];
    size_t n = 0;
    while (s[n]) n++;
    cb__xxh64_update(&h, s, n);
    cb__xxh64_update(&h, "\n", 1);
  }
  return cb__xxh64_digest(&h);
}
