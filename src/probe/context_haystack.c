/*
 * context_haystack.c - the built-in haystack of `probe context`: public-domain prose
 * (United States works of 1776 and 1863, never under copyright), long enough that
 * the words of a prompt rarely repeat within a few thousand tokens; longer prompts
 * wrap around it (cb_tok_synth). Sources: the Declaration of Independence (4 July
 * 1776, the engrossed text as the U.S. National Archives transcribe it) and Abraham
 * Lincoln's Gettysburg Address (19 November 1863, the Bliss copy).
 */
#include <pthread.h>
#include <string.h>

#include "calibench/probe_context.h"

/* In parts: C17 compilers need support string literals of 4095 bytes only. */
static const char *const PARTS[] = {
    "When in the Course of human events, it becomes necessary for one people to dissolve the "
    "political bands which have connected them with another, and to assume among the powers of "
    "the earth, the separate and equal station to which the Laws of Nature and of Nature's God "
    "entitle them, a decent respect to the opinions of mankind requires that they should declare "
    "the causes which impel them to the separation. "
    "We hold these truths to be self-evident, that all men are created equal, that they are "
    "endowed by their Creator with certain unalienable Rights, that among these are Life, Liberty "
    "and the pursuit of Happiness. That to secure these rights, Governments are instituted among "
    "Men, deriving their just powers from the consent of the governed, That whenever any Form of "
    "Government becomes destructive of these ends, it is the Right of the People to alter or to "
    "abolish it, and to institute new Government, laying its foundation on such principles and "
    "organizing its powers in such form, as to them shall seem most likely to effect their Safety "
    "and Happiness. Prudence, indeed, will dictate that Governments long established should not be "
    "changed for light and transient causes; and accordingly all experience hath shewn, that "
    "mankind are more disposed to suffer, while evils are sufferable, than to right themselves by "
    "abolishing the forms to which they are accustomed. But when a long train of abuses and "
    "usurpations, pursuing invariably the same Object evinces a design to reduce them under "
    "absolute Despotism, it is their right, it is their duty, to throw off such Government, and "
    "to provide new Guards for their future security. Such has been the patient sufferance of "
    "these Colonies; and such is now the necessity which constrains them to alter their former "
    "Systems of Government. The history of the present King of Great Britain is a history of "
    "repeated injuries and usurpations, all having in direct object the establishment of an "
    "absolute Tyranny over these States. To prove this, let Facts be submitted to a candid world. "
    "He has refused his Assent to Laws, the most wholesome and necessary for the public good. "
    "He has forbidden his Governors to pass Laws of immediate and pressing importance, unless "
    "suspended in their operation till his Assent should be obtained; and when so suspended, he "
    "has utterly neglected to attend to them. "
    "He has refused to pass other Laws for the accommodation of large districts of people, unless "
    "those people would relinquish the right of Representation in the Legislature, a right "
    "inestimable to them and formidable to tyrants only. "
    "He has called together legislative bodies at places unusual, uncomfortable, and distant from "
    "the depository of their public Records, for the sole purpose of fatiguing them into "
    "compliance with his measures. ",
    "He has dissolved Representative Houses repeatedly, for opposing with manly firmness his "
    "invasions on the rights of the people. "
    "He has refused for a long time, after such dissolutions, to cause others to be elected; "
    "whereby the Legislative powers, incapable of Annihilation, have returned to the People at "
    "large for their exercise; the State remaining in the mean time exposed to all the dangers of "
    "invasion from without, and convulsions within. "
    "He has endeavoured to prevent the population of these States; for that purpose obstructing "
    "the Laws for Naturalization of Foreigners; refusing to pass others to encourage their "
    "migrations hither, and raising the conditions of new Appropriations of Lands. "
    "He has obstructed the Administration of Justice, by refusing his Assent to Laws for "
    "establishing Judiciary powers. "
    "He has made Judges dependent on his Will alone, for the tenure of their offices, and the "
    "amount and payment of their salaries. "
    "He has erected a multitude of New Offices, and sent hither swarms of Officers to harrass our "
    "people, and eat out their substance. "
    "He has kept among us, in times of peace, Standing Armies without the Consent of our "
    "legislatures. "
    "He has affected to render the Military independent of and superior to the Civil power. "
    "In every stage of these Oppressions We have Petitioned for Redress in the most humble terms: "
    "Our repeated Petitions have been answered only by repeated injury. A Prince whose character "
    "is thus marked by every act which may define a Tyrant, is unfit to be the ruler of a free "
    "people. "
    "Nor have We been wanting in attentions to our Brittish brethren. We have warned them from "
    "time to time of attempts by their legislature to extend an unwarrantable jurisdiction over "
    "us. We have reminded them of the circumstances of our emigration and settlement here. We "
    "have appealed to their native justice and magnanimity, and we have conjured them by the ties "
    "of our common kindred to disavow these usurpations, which, would inevitably interrupt our "
    "connections and correspondence. They too have been deaf to the voice of justice and of "
    "consanguinity. We must, therefore, acquiesce in the necessity, which denounces our "
    "Separation, and hold them, as we hold the rest of mankind, Enemies in War, in Peace Friends. "
    "Four score and seven years ago our fathers brought forth on this continent, a new nation, "
    "conceived in Liberty, and dedicated to the proposition that all men are created equal. "
    "Now we are engaged in a great civil war, testing whether that nation, or any nation so "
    "conceived and so dedicated, can long endure. We are met on a great battle-field of that war. "
    "We have come to dedicate a portion of that field, as a final resting place for those who ",
    "here gave their lives that that nation might live. It is altogether fitting and proper that "
    "we should do this. "
    "But, in a larger sense, we can not dedicate, we can not consecrate, we can not hallow, this "
    "ground. The brave men, living and dead, who struggled here, have consecrated it, far above "
    "our poor power to add or detract. The world will little note, nor long remember what we say "
    "here, but it can never forget what they did here. It is for us the living, rather, to be "
    "dedicated here to the unfinished work which they who fought here have thus far so nobly "
    "advanced. It is rather for us to be here dedicated to the great task remaining before us, "
    "that from these honored dead we take increased devotion to that cause for which they gave "
    "the last full measure of devotion, that we here highly resolve that these dead shall not "
    "have died in vain, that this nation, under God, shall have a new birth of freedom, and that "
    "government of the people, by the people, for the people, shall not perish from the earth."};

static char text[8192];
static size_t text_len;
static pthread_once_t text_once = PTHREAD_ONCE_INIT;

static void join(void) {
  for (size_t i = 0; i < sizeof PARTS / sizeof PARTS[0]; i++) {
    size_t n = strlen(PARTS[i]);
    if (text_len + n >= sizeof text) break; /* never: the parts fit */
    memcpy(text + text_len, PARTS[i], n);
    text_len += n;
  }
  text[text_len] = '\0';
}

const char *cb_probe_context_haystack(size_t *len) {
  pthread_once(&text_once, join);
  *len = text_len;
  return text;
}
