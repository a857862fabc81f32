/*
 * test_stats_divergence.c - entropy, KL and Jensen-Shannon divergences against SciPy;
 * smoothing, shared bin edges and counting; the JS bootstrap interval.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/rng.h"
#include "calibench/stats.h"
#include "stats/multinomial_internal.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MAXK 40

/* |got - want| <= 1e-12 (1 + |want|); infinities must match exactly. */
static void check_close(const char *what, size_t i, double got, double want) {
  if (isinf(want) || isinf(got)) {
    if (got != want) fail_msg("case %zu %s: got %.17g, want %.17g", i, what, got, want);
    return;
  }
  if (!(fabs(got - want) <= 1e-12 * (1.0 + fabs(want))))
    fail_msg("case %zu %s: got %.17g, want %.17g (diff %.3g)", i, what, got, want,
             fabs(got - want));
}

/*
 * Expected values from SciPy 1.10.1 (Debian bookworm python3-scipy), produced by
 * `/usr/bin/python3 gen_div.py` with gen_div.py:
 *   import numpy as np
 *   from scipy import stats
 *   from scipy.spatial import distance
 *   rng = np.random.default_rng(20240601)
 *   def smooth(w, eps):
 *       w = np.asarray(w, dtype=float)
 *       return (w / np.sum(w) + eps) / (1.0 + len(w) * eps)
 *   def r(x):
 *       x = float(x)
 *       return "INFINITY" if np.isinf(x) else repr(x)
 *   cases = []
 *   for k in [2, 3, 5, 8, 12, 20, 40]:
 *       for zeros in [0, 1, 2]:
 *           p = rng.random(k) * rng.choice([1.0, 100.0, 1e-3])
 *           q = rng.random(k) * rng.choice([1.0, 100.0, 1e-3])
 *           if zeros >= 1: p[rng.integers(k)] = 0.0   # a label present in production only
 *           if zeros >= 2: q[rng.integers(k)] = 0.0   # ... and one in the benchmark only
 *           cases.append((p, q))
 *   for p, q in cases:
 *       k = len(p)
 *       ps, qs = smooth(p, 1e-6), smooth(q, 1e-6)
 *       print("    {%d, {%s}, {%s}," % (k, ", ".join(repr(float(x)) for x in p),
 *                                       ", ".join(repr(float(x)) for x in q)))
 *       print("     %s, %s, %s, %s, %s, %s, %s, %s}," % (
 *           r(stats.entropy(p, base=2)), r(stats.entropy(q, base=2)),
 *           r(stats.entropy(p, q, base=2)), r(stats.entropy(q, p, base=2)),
 *           r(distance.jensenshannon(p, q, base=2) ** 2),
 *           r(stats.entropy(ps, qs, base=2)), r(stats.entropy(qs, ps, base=2)),
 *           r(distance.jensenshannon(p, q) ** 2)))
 * Columns: entropy(p), entropy(q), KL(p||q), KL(q||p), JS = jensenshannon(p, q, base=2)^2,
 * KL(p'||q'), KL(q'||p') with p', q' additively smoothed (epsilon 1e-6), and JS in nats
 * (jensenshannon(p, q)^2, natural log). All in bits except the last. The weights are
 * unnormalised (SciPy and calibench both divide by the sum) and zeroed at random to have
 * labels on one side only.
 */
typedef struct div_case {
  size_t k;
  double p[MAXK], q[MAXK];
  double h_p, h_q, kl_pq, kl_qp, js, kl_pq_smooth, kl_qp_smooth, js_nats;
} div_case;

static const div_case div_cases[] = {
    {2,
     {0.7918213070746603, 0.5808676150981337},
     {94.70366230427229, 14.274442405701404},
     0.982896028688684,
     0.5601320076666921,
     0.37487209163847895,
     0.292171468660084,
     0.0799170782012736,
     0.374869709463605,
     0.2921700491094435,
     0.055394297433801455},
    {2,
     {46.41058223621174, 0.0},
     {79.09342319596048, 73.19500189611436},
     0.0,
     0.9989175920640425,
     0.9451766504984626,
     INFINITY,
     0.2961082840812227,
     0.9451554956768932,
     8.580875754348492,
     0.20524662225134283},
    {2,
     {14.81401542391242, 0.0},
     {0.9736423430620412, 0.0},
     0.0,
     0.0,
     0.0,
     0.0,
     0.0,
     0.0,
     0.0,
     0.0},
    {3,
     {0.18941702874673572, 0.5978251673974553, 0.008030974223651066},
     {0.0007081770135853991, 0.0003549491596510235, 4.0789754073709994e-05},
     0.8694562804323271,
     1.1130127361123696,
     0.5616657658553602,
     0.5922002988837343,
     0.13910531051683833,
     0.5616620305115033,
     0.5921951445008918,
     0.09642045378566219},
    {3,
     {0.2404319818696551, 0.022716412090474147, 0.0},
     {0.0006264248612919971, 9.453102124841962e-05, 0.0001533904336965123},
     0.4240843458513644,
     1.1321549678465253,
     0.2924992437785124,
     INFINITY,
     0.09722730494980693,
     0.29248086547380264,
     2.83994455385299,
     0.06739283229940067},
    {3,
     {0.0, 16.974756581145922, 24.89955314658627},
     {0.8482943541158482, 0.40711700240283333, 0.0},
     0.9740075106837595,
     0.9089855141585594,
     INFINITY,
     INFINITY,
     0.6384247215904969,
     11.53637668179266,
     12.98138679447638,
     0.44252229577022106},
    {5,
     {0.0008961867853515726, 0.0009643993857651833, 0.00029741808219216326, 0.00024923339271269495,
      0.0005358734883420356},
     {34.18209837787802, 88.51488103895836, 8.650235821034357, 79.01245424600475,
      26.98239056130579},
     2.133038418117255,
     1.9923401659318307,
     0.3729124362173766,
     0.4406469013532513,
     0.09628209811369917,
     0.3729078588634932,
     0.440641425377723,
     0.06673766484590661},
    {5,
     {0.00029423901152217017, 0.0006869811743632798, 0.000661547940579121, 0.0,
      0.00025757381620734556},
     {0.5958357197717856, 0.43287763887750064, 0.9931430120822895, 0.6083209131238992,
      0.38774726176761354},
     1.8680983393611976,
     2.237727961898974,
     0.46652193863794494,
     INFINITY,
     0.13801907991888987,
     0.4665010816772453,
     3.3931588069186702,
     0.09566753610925628},
    {5,
     {0.0008068361844077409, 0.0009320492064332068, 0.0, 0.000972032838168753,
      0.0008661901898949471},
     {0.0009690396143234828, 0.0, 0.0001739533159324569, 0.000686706893494425,
      0.0008703003531580352},
     1.9963942262768293,
     1.8143180489966035,
     INFINITY,
     INFINITY,
     0.17789353122126192,
     4.462641640382584,
     1.3784792508710135,
     0.1233063996058703},
    {8,
     {0.000779622500123395, 0.0006130615625433762, 0.0006134278753825712, 0.0009710278187862523,
      0.000245189716174238, 0.00012247131928544075, 9.497065510863068e-05, 0.00026487953296516433},
     {20.0554494474107, 48.992967790084776, 91.0919242361739, 40.51266832927911, 91.79333286230133,
      0.9268309721624846, 50.230354550450976, 69.02654630309893},
     2.6680706765599975,
     2.6904650616275925,
     0.6940195283821752,
     0.6519717542805447,
     0.15552138677358887,
     0.6939919998252142,
     0.6519568233106007,
     0.1077992107588859},
    {8,
     {83.7410185583425, 98.2437316249644, 64.46132296581128, 78.77038835713026, 86.67858179739358,
      55.56167479015585, 0.0, 18.282181443853695},
     {0.00035959621362826054, 0.0008587640683489394, 0.0007297803286912976, 0.000511090182826247,
      0.0009020398020002656, 0.0006856866229104704, 0.00027820428352701723, 0.0009933432785828105},
     2.695438357631449,
     2.895430286384534,
     0.3209132723804416,
     INFINITY,
     0.09045838972390899,
     0.3208926967923521,
     1.0516779089112749,
     0.06270097779512024},
    {8,
     {0.5583235577577919, 0.7400493218815024, 0.3729654224689225, 0.018075725159533818,
      0.8929318499241614, 0.0, 0.7367148524913862, 0.9012650253394578},
     {0.0, 0.4705507444106759, 0.05750557233102749, 0.3492679369028524, 0.29982799478115263,
      0.008880440044301219, 0.4917766176774302, 0.22275830789398188},
     2.558838060372677,
     2.42410747653067,
     INFINITY,
     INFINITY,
     0.18201370982288928,
     2.4522342159186072,
     1.1085924633791815,
     0.12616228978699173},
    {12,
     {65.97854252580416, 68.90616828205336, 66.40413607251678, 23.974950948142503,
      53.133404287190686, 70.11215444809719, 31.30144454988457, 75.71559912401827, 67.8510717817663,
      97.17843769344579, 88.07109764446508, 37.90898946993534},
     {0.0006143599099529648, 0.00014300594248496556, 0.00041200144483055943, 0.0007782468918058644,
      3.9664404111060314e-05, 0.0007627382389961908, 0.00014644332852764008, 0.0007406646339039211,
      0.0007407790978202053, 0.00048361370261092884, 0.0009858606036642144, 3.5144050200823784e-06},
     3.494453998830724,
     3.1857265623591506,
     0.6211086651176744,
     0.37795407915434626,
     0.09995101949371865,
     0.6209731140661373,
     0.3779384756654084,
     0.0692807673561632},
    {12,
     {0.0003304461657731729, 0.0003207780123760184, 0.0001381826205756046, 0.00045750425562630573,
      0.0007096299038787978, 0.0005701803603470412, 0.0, 0.0005738787040981577,
      0.00026459245828402647, 0.00013510523055953826, 0.0005486113303346815, 0.0003772725965251652},
     {5.638687689558674, 65.3461363478397, 70.70907875964795, 0.01779054481573228,
      51.982374586459215, 20.245114605009874, 70.82328424000842, 70.6726070426602,
      6.756200413219304, 30.039236490866028, 26.47971868985146, 65.4449858314042},
     3.3076265886766225,
     3.1731535203951355,
     1.7134226548725007,
     INFINITY,
     0.2291364884087574,
     1.7093821878277233,
     2.879020490150588,
     0.15882531090393676},
    {12,
     {0.0, 83.37278393727033, 4.276175454270703, 36.01662618065371, 77.61240338908276,
      45.60250945995612, 23.185285210891983, 74.1546577968798, 54.89408846659861,
      11.563687866380977, 34.377303435567306, 79.54661005044042},
     {37.72754159487756, 84.79672937055707, 37.59483549414816, 39.29842497979414,
      50.302827234445935, 13.095468635036312, 17.204191211414088, 42.776642395184126,
      92.51710338348276, 64.38071302415884, 0.0, 66.09756565787193},
     3.1880290518736225,
     3.280851165273786,
     INFINITY,
     INFINITY,
     0.14574208918553866,
     1.3511249768613998,
     1.4978249517373747,
     0.10102071820787223},
    {20,
     {35.239736043168925, 14.705258100530926, 43.97218062844965,  52.39451841668924,
      20.779376996101885, 96.03683683382029,  26.937222121809622, 10.214341652845427,
      69.98092930814049,  56.969459844743355, 97.15090878241976,  78.28810509093395,
      81.05207985876733,  30.366686537346332, 1.1492081735302806, 77.2063105730738,
      79.6765145867173,   97.47697083596728,  25.085474392400407, 20.546507320308738},
     {0.0005599721887044567,  0.0009049248155394452,  0.00027921324092387644,
      0.00041172545576764497, 0.0004672816877323387,  0.0005638506075438444,
      0.0003435935444012271,  0.0009689531432435369,  1.1315086512850182e-05,
      0.0009738508008515736,  0.0009168100277874144,  0.0004216817683909203,
      0.00029337382040686244, 0.00030436046523334105, 0.0007676559996429583,
      7.471164165849375e-05,  0.0007886513310039105,  0.0006672480932825697,
      0.0004229771578549805,  0.0006320875143696336},
     4.01906404790263,
     4.094056063507596,
     0.8898789181415244,
     0.9325286080007296,
     0.17302173364949106,
     0.8897514959871872,
     0.9324034662785918,
     0.11992952685473852},
    {20,
     {0.7420472517585244,   0.5999591944859882, 0.0,
      0.09048938772374548,  0.5114902610429989, 0.5876416742541231,
      0.01879744164377606,  0.8225006569597355, 0.94932054092498,
      0.054098286186483824, 0.9252641720625222, 0.2144414729410158,
      0.6207527361343688,   0.7369550840254259, 0.7675285800901086,
      0.46797866070744576,  0.3455490785319921, 0.3333829801849193,
      0.38861499221861795,  0.875387123381459},
     {0.00044852713028232426, 0.0008698621040745062,  3.654445978626697e-05,
      0.0002359611551384283,  0.0003207421994377846,  0.0005291214681820804,
      0.00036173758103405263, 0.0008759504390343782,  0.0009432354615180857,
      0.0009838912711353095,  0.00047646196765141735, 0.00017226979093748384,
      0.0005633199777397761,  0.00012157252020513599, 0.00031728775030148926,
      0.0002811940050953786,  0.00022158361171245843, 9.030426635416023e-05,
      0.0009648727929297722,  0.0009430557187708624},
     3.9812856036264694,
     3.995707994855097,
     0.42239756329150685,
     INFINITY,
     0.10875796430666092,
     0.422362156038142,
     0.644759140564203,
     0.0753852763226012},
    {20,
     {0.0003028340725778457, 0.0007157505895475652, 0.0006518492292111072,  0.0003264545069381316,
      0.0007533399510996585, 0.0008305182520131903, 0.00041048571820158955, 0.0,
      0.0008478563692650979, 0.000296245199086642,  0.0006165587950194068,  0.0009981170832186596,
      0.0007021026553284342, 0.0008384790343657051, 0.0005456418244902578,  0.0006859070728799708,
      0.0005621960242583287, 0.0006933858828914618, 0.0008519477944251144,  0.00041434422750583424},
     {94.033713141483,
      2.8954790619275195,
      58.91564821492673,
      5.298166491889445,
      0.0,
      13.99042393170552,
      99.09245963955131,
      59.420761876920466,
      48.29607739254757,
      44.44364261189616,
      71.00615091522795,
      10.13924398746262,
      43.959812910295845,
      4.199647136836859,
      14.39724838400992,
      63.99899169688395,
      14.438804995344789,
      90.90463806563164,
      70.89556745562969,
      19.97503494330659},
     4.1704157240599535,
     3.818016720015286,
     INFINITY,
     INFINITY,
     0.21752232246468392,
     1.802834310676148,
     1.7259289016109607,
     0.15077498452524693},
    {40,
     {59.86764553446393,  98.64762040591171,  67.66222727393199,  43.828751908470224,
      32.24855078279003,  87.90440527043057,  91.41205278410898,  95.1103668623701,
      50.88520388881671,  18.568804554288775, 15.140396331217353, 91.4795270867005,
      15.995297293310863, 27.136353009150238, 96.79283910018393,  40.50995859994503,
      95.07505010588413,  74.21971709870047,  52.16654070678411,  13.630310884660467,
      62.375745986842176, 18.087875940996955, 61.1854325254647,   17.50407016109825,
      17.270269467859812, 97.04108125525512,  77.05956366454446,  37.747036510756935,
      81.28480368339737,  37.66922276606427,  45.40093282043409,  64.73027129955148,
      27.028501468640044, 96.09350631480253,  65.59069155307155,  2.5555066195969367,
      2.996482904077158,  93.67760466590416,  22.19950342318778,  42.50386710251149},
     {5.028994714280477,  67.14645791739088,  35.528365880066495, 29.12517387847752,
      93.38072757446564,  5.482010566692564,  71.35538766410112,  29.177823011188398,
      43.017757683518965, 4.40767176405722,   17.76155364883908,  69.8903749198276,
      26.12162964765412,  49.37432394161417,  65.77505910819751,  81.34583802669093,
      57.07353784032412,  25.153507481015392, 56.75333986545925,  93.83617196986577,
      95.34581950244252,  91.63059011133356,  28.11146025563742,  41.912764028560666,
      31.728278131801734, 43.0488481158497,   28.602608343242608, 3.6303791983085643,
      93.00344643345338,  78.80508287038967,  56.67942884816814,  60.20139908971878,
      26.512624751330925, 23.90502443923267,  10.124390136602358, 80.28477451715365,
      66.50545568372189,  67.04925913275882,  30.64758308399107,  19.831607003390197},
     5.053688479574549,
     5.044879611810606,
     0.6382404799262272,
     0.7469476701902505,
     0.14545838324724839,
     0.6381541087488586,
     0.7468144956740939,
     0.1008240682366382},
    {40,
     {0.9218796379974076,  0.20533946572437722, 0.8531367562746832,
      0.30944590042482967, 0.458964254237864,   0.8588961617990524,
      0.6994957822743167,  0.4777388444221209,  0.0,
      0.4426904726244779,  0.9828331803843792,  0.9937772535718844,
      0.3308088733594685,  0.3066711370003794,  0.060553351175304915,
      0.34254753631107604, 0.7296312661001744,  0.6747821293407714,
      0.5138171574420203,  0.18607087803112,    0.4847509387407647,
      0.11677864880725841, 0.6208898561542248,  0.02624187173392134,
      0.566557311645131,   0.43639652613496627, 0.09908812833607905,
      0.20579562209233426, 0.838907416484108,   0.2616039617750231,
      0.9683692444452322,  0.8164573241706545,  0.9677193830965778,
      0.40489778261239173, 0.3601824379475643,  0.7178252490463821,
      0.904266109274711,   0.5590286926139096,  0.38015483083306734,
      0.5856975454443875},
     {0.7057615390149583,  0.16718412570344465, 0.20243877134432375, 0.3629926880073767,
      0.47913902588018753, 0.22676177821001897, 0.36902915960384586, 0.9431188419989021,
      0.4413396768793276,  0.15335079502134552, 0.633777904476662,   0.35213629889978537,
      0.9859586797508062,  0.6591022592166192,  0.37552726666179803, 0.8488315458291031,
      0.29148121390644466, 0.5186878257617442,  0.15785652104569337, 0.9974074317814438,
      0.0877944650648187,  0.8508337064671911,  0.4485760110346664,  0.2994626252719468,
      0.7293703644894521,  0.29519171581801606, 0.21599020122021118, 0.31452358634285316,
      0.9867101517500577,  0.05142981855578488, 0.2866526177814904,  0.5571653893201927,
      0.6917958525976632,  0.47780123449249323, 0.4436836846661105,  0.9593318753829563,
      0.9931566204178826,  0.44272629028322774, 0.28692947112793143, 0.09824222940263949},
     5.054623664115631,
     5.066757263029998,
     0.4882425291480845,
     INFINITY,
     0.11991117553004683,
     0.48817750873930715,
     0.7873871241246382,
     0.08311609323628068},
    {40,
     {50.03291462300879,
      31.39013451159245,
      26.614380110147508,
      0.9283538001229941,
      52.47720950271,
      42.11194804143143,
      81.73068003346387,
      43.36609922996203,
      2.63892016346321,
      74.7045379249912,
      30.974355728661106,
      38.681571087861556,
      58.251763240585355,
      69.59604754685871,
      46.84058950447856,
      4.042339392268168,
      86.0648558699415,
      44.35501721971591,
      88.3534814179876,
      88.37033631924633,
      95.5309305450456,
      26.237229278447003,
      26.865286129401422,
      32.278520742310604,
      45.35275395063552,
      96.18955201287018,
      15.24320468746968,
      58.866944904767,
      0.0,
      66.38755815314947,
      42.58393091361668,
      97.22061766806881,
      44.05975302446159,
      66.88848146127835,
      1.9508337548447052,
      22.84963620583217,
      0.8014326180988962,
      18.588599138273043,
      63.675760063049694,
      2.4138597959546537},
     {0.434150734824128,    0.5171721502601972,   0.43073232704655673,
      0.07159797881442931,  0.3631761591089331,   0.14895399542698584,
      0.30113241333197516,  0.9097825615192751,   0.7299826277950626,
      0.07225158190279168,  0.5146063013121138,   0.2789988885301681,
      0.25426750841064427,  0.2481338687883855,   0.46435484255029913,
      0.034694013818920455, 0.4478311232314688,   0.4281470418477118,
      0.7955014213589072,   0.07118078719782595,  0.3805109322734469,
      0.5696812666917999,   0.04526100760151641,  0.22975874689512865,
      0.9407026961537887,   0.038115924088947595, 0.20298556336512175,
      0.24719724864561932,  0.06274901482846851,  0.5161013591565073,
      0.7279280114279896,   0.5936722591739623,   0.3934817773781504,
      0.3833757137672771,   0.8338261514012362,   0.20159499858103347,
      0.13085689604184758,  0.571126483689622,    0.0,
      0.17428132633933258},
     4.940703904809834,
     4.949410468328751,
     INFINITY,
     INFINITY,
     0.17700557522155408,
     1.2156069546657393,
     0.9618048109041067,
     0.12269091540821155},
};

static void test_scipy_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < ARRAY_LEN(div_cases); i++) {
    const div_case *c = &div_cases[i];
    check_close("entropy(p)", i, cb_stats_entropy(c->p, c->k, 2.0), c->h_p);
    check_close("entropy(q)", i, cb_stats_entropy(c->q, c->k, 2.0), c->h_q);
    check_close("KL(p||q)", i, cb_stats_kl(c->p, c->q, c->k, 2.0), c->kl_pq);
    check_close("KL(q||p)", i, cb_stats_kl(c->q, c->p, c->k, 2.0), c->kl_qp);
    check_close("JS bits", i, cb_stats_js(c->p, c->q, c->k, 2.0), c->js);
    check_close("JS nats", i, cb_stats_js(c->p, c->q, c->k, exp(1.0)), c->js_nats);
    double ps[MAXK], qs[MAXK];
    assert_int_equal(cb_stats_smooth_additive(c->p, c->k, 1e-6, ps, NULL), CB_OK);
    assert_int_equal(cb_stats_smooth_additive(c->q, c->k, 1e-6, qs, NULL), CB_OK);
    check_close("KL(p'||q')", i, cb_stats_kl(ps, qs, c->k, 2.0), c->kl_pq_smooth);
    check_close("KL(q'||p')", i, cb_stats_kl(qs, ps, c->k, 2.0), c->kl_qp_smooth);
    /* the per-label terms add up to JS; JS is symmetric and in [0, 1] bits */
    double terms[MAXK], sum = 0.0;
    double js = cb_stats_js_terms(c->p, c->q, c->k, 2.0, terms);
    for (size_t j = 0; j < c->k; j++) {
      assert_true(terms[j] >= 0.0);
      sum += terms[j];
    }
    check_close("sum of JS terms", i, sum, js);
    check_close("JS(q, p)", i, cb_stats_js(c->q, c->p, c->k, 2.0), c->js);
    assert_true(js >= 0.0 && js <= 1.0);
  }
}

/* Hand-checkable values: disjoint supports give exactly 1 bit; equal ones 0. */
static void test_known_values(void **state) {
  (void)state;
  const double a[] = {1, 0}, b[] = {0, 1}, u[] = {1, 1, 1, 1}, v[] = {5, 5, 5, 5};
  assert_true(cb_stats_js(a, b, 2, 2.0) == 1.0);
  assert_true(cb_stats_kl(a, b, 2, 2.0) == INFINITY);
  assert_true(cb_stats_js(u, v, 4, 2.0) == 0.0);
  assert_true(cb_stats_kl(u, v, 4, 2.0) == 0.0);
  check_close("entropy(uniform 4)", 0, cb_stats_entropy(u, 4, 2.0), 2.0);
  /* p = (1/2, 1/2), q = (1, 0): m = (3/4, 1/4);
   * D(p||m) = 1/2 log2(2/3) + 1/2 log2(2) = 1 - 1/2 log2 3; D(q||m) = log2(4/3) = 2 - log2 3
   * JS = (3 - 3/2 log2 3) / 2 = 3/2 - 3/4 log2 3 */
  const double h[] = {1, 1}, one[] = {1, 0};
  check_close("JS half/one", 0, cb_stats_js(h, one, 2, 2.0), 1.5 - 0.75 * log2(3.0));
}

static void test_invalid_inputs(void **state) {
  (void)state;
  const double neg[] = {1, -1}, zero[] = {0, 0}, ok[] = {1, 1}, nan_w[] = {1, NAN};
  assert_true(isnan(cb_stats_entropy(ok, 0, 2.0)));
  assert_true(isnan(cb_stats_entropy(neg, 2, 2.0)));
  assert_true(isnan(cb_stats_entropy(zero, 2, 2.0)));
  assert_true(isnan(cb_stats_entropy(nan_w, 2, 2.0)));
  assert_true(isnan(cb_stats_entropy(ok, 2, 1.0)));
  assert_true(isnan(cb_stats_js(ok, neg, 2, 2.0)));
  assert_true(isnan(cb_stats_kl(zero, ok, 2, 2.0)));
  double out[2] = {7, 7};
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_stats_smooth_additive(ok, 2, -1e-3, out, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "epsilon"));
  assert_int_equal(cb_stats_smooth_additive(neg, 2, 1e-3, out, &err), CB_ERR_INVALID);
  assert_true(out[0] == 7 && out[1] == 7);
}

static void test_smoothing(void **state) {
  (void)state;
  const double w[] = {3, 1, 0};
  double s[3];
  assert_int_equal(cb_stats_smooth_additive(w, 3, 0.01, s, NULL), CB_OK);
  check_close("s0", 0, s[0], (0.75 + 0.01) / 1.03);
  check_close("s1", 0, s[1], (0.25 + 0.01) / 1.03);
  check_close("s2", 0, s[2], 0.01 / 1.03);
  check_close("sum", 0, s[0] + s[1] + s[2], 1.0);
}

static void test_binning(void **state) {
  (void)state;
  double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  double edges[5];
  size_t ne = cb_stats_quantile_edges(x, 10, 4, edges);
  assert_int_equal(ne, 5);
  /* numpy.quantile(range(1, 11), [0, .25, .5, .75, 1]) = 1, 3.25, 5.5, 7.75, 10 */
  const double want[] = {1, 3.25, 5.5, 7.75, 10};
  for (size_t i = 0; i < 5; i++) check_close("edge", i, edges[i], want[i]);
  double counts[4];
  uint64_t below, above;
  assert_int_equal(cb_stats_bin_count(x, 10, edges, 5, true, counts, &below, &above, NULL), CB_OK);
  assert_true(counts[0] == 3 && counts[1] == 2 && counts[2] == 2 && counts[3] == 3);
  assert_true(below == 0 && above == 0);
  /* half-open last bin: 10 is above [7.75, 10) */
  assert_int_equal(cb_stats_bin_count(x, 10, edges, 5, false, counts, &below, &above, NULL), CB_OK);
  assert_true(counts[3] == 2 && above == 1);
  /* explicit edges with values outside */
  const double e2[] = {2.5, 5, 100};
  assert_int_equal(cb_stats_bin_count(x, 10, e2, 3, false, counts, &below, &above, NULL), CB_OK);
  assert_true(below == 2 && counts[0] == 2 && counts[1] == 6 && above == 0);
  /* repeated values drop repeated edges; all-equal gives one closed bin */
  double same[] = {4, 4, 4, 4};
  ne = cb_stats_quantile_edges(same, 4, 10, edges);
  assert_int_equal(ne, 2);
  assert_true(edges[0] == 4 && edges[1] == 4);
  assert_int_equal(cb_stats_bin_count(same, 4, edges, 2, true, counts, &below, &above, NULL),
                   CB_OK);
  assert_true(counts[0] == 4);
  double rep[] = {1, 1, 1, 1, 1, 1, 1, 2, 3, 4};
  double e3[11];
  ne = cb_stats_quantile_edges(rep, 10, 10, e3);
  for (size_t i = 1; i < ne; i++) assert_true(e3[i] > e3[i - 1]);
  assert_true(e3[0] == 1 && e3[ne - 1] == 4);
  assert_int_equal(cb_stats_quantile_edges(rep, 0, 10, e3), 0);
  /* bad edges */
  cb_error err;
  cb_error_clear(&err);
  const double bad[] = {1, 3, 2};
  assert_int_equal(cb_stats_bin_count(x, 10, bad, 3, false, counts, &below, &above, &err),
                   CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "edge 3 (2) is not above edge 2 (3)"));
  assert_int_equal(cb_stats_bin_count(x, 10, bad, 1, false, counts, &below, &above, &err),
                   CB_ERR_INVALID);
}

static void test_bootstrap(void **state) {
  (void)state;
  const double bench[] = {1, 1, 1, 1, 1};         /* known population: held fixed */
  const double prod[] = {400, 300, 150, 100, 50}; /* a sample of 1000 */
  cb_stats_js_boot_params bp;
  cb_stats_js_boot_default_params(&bp);
  assert_int_equal(bp.replicates, 2000);
  bp.replicates = 500;
  bp.seed = 7;
  cb_stats_js_interval a, b;
  assert_int_equal(cb_stats_js_bootstrap(bench, prod, 5, 0, 1000, &bp, &a, NULL), CB_OK);
  assert_int_equal(cb_stats_js_bootstrap(bench, prod, 5, 0, 1000, &bp, &b, NULL), CB_OK);
  assert_memory_equal(&a, &b, sizeof a); /* deterministic per seed */
  check_close("estimate", 0, a.estimate, cb_stats_js(bench, prod, 5, 2.0));
  assert_true(a.lo < a.estimate && a.estimate < a.hi);
  assert_true(a.hi - a.lo < 0.05);
  assert_true(a.level == 0.95 && a.replicates == 500);
  /* 100 times the sample: the interval narrows by about 10x */
  cb_stats_js_interval c;
  assert_int_equal(cb_stats_js_bootstrap(bench, prod, 5, 0, 100000, &bp, &c, NULL), CB_OK);
  double ratio = (a.hi - a.lo) / (c.hi - c.lo);
  if (!(ratio > 6 && ratio < 15)) fail_msg("width ratio %g, want about 10", ratio);
  /* another seed moves the bounds a little, not much */
  bp.seed = 8;
  assert_int_equal(cb_stats_js_bootstrap(bench, prod, 5, 0, 1000, &bp, &b, NULL), CB_OK);
  assert_true(b.lo != a.lo && fabs(b.lo - a.lo) < 0.01);
  /* equal distributions with both sides sampled: the interval starts near 0 and the
   * replicate mean shows the plug-in estimator's upward bias */
  assert_int_equal(cb_stats_js_bootstrap(bench, bench, 5, 200, 200, &bp, &b, NULL), CB_OK);
  assert_true(b.estimate == 0.0 && b.lo >= 0.0 && b.hi < 0.05 && b.replicate_mean > 0.0);
  /* errors */
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_stats_js_bootstrap(bench, prod, 5, 0, 0, &bp, &b, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "nothing to resample"));
  bp.level = 1.0;
  assert_int_equal(cb_stats_js_bootstrap(bench, prod, 5, 0, 10, &bp, &b, &err), CB_ERR_INVALID);
  bp.level = 0.9;
  bp.replicates = 1;
  assert_int_equal(cb_stats_js_bootstrap(bench, prod, 5, 0, 10, &bp, &b, &err), CB_ERR_INVALID);
}

/* Draws of Binomial(n, p) against the exact law: mean and variance within 5 standard
 * errors, and a chi-square test over the cells with an expected count >= 5 below
 * df + 6 sqrt(2 df) (a 6-sigma bound, so the test is not flaky). The cases cover
 * inversion (n p < 10), BTRD's recurrence (|k - m| <= 15) and squeeze regions, the
 * p > 1/2 symmetry and a huge n. */
static void check_binomial(uint64_t n, double p, size_t draws, int chi_square) {
  cb_rng rng;
  cb_rng_init(&rng, 42 + n);
  double sum = 0.0, sum2 = 0.0;
  size_t cells = chi_square ? (size_t)n + 1 : 0;
  double *obs = cells ? calloc(cells, sizeof *obs) : NULL;
  for (size_t i = 0; i < draws; i++) {
    uint64_t x = cb__stats_binomial(&rng, n, p);
    if (x > n)
      fail_msg("Binomial(%llu, %g) drew %llu", (unsigned long long)n, p, (unsigned long long)x);
    sum += (double)x;
    sum2 += (double)x * (double)x;
    if (obs) obs[x] += 1.0;
  }
  double mean = sum / (double)draws, var = sum2 / (double)draws - mean * mean;
  double mu = (double)n * p, sigma2 = (double)n * p * (1.0 - p);
  if (fabs(mean - mu) > 5.0 * sqrt(sigma2 / (double)draws))
    fail_msg("Binomial(%llu, %g): mean %g, want %g", (unsigned long long)n, p, mean, mu);
  if (fabs(var - sigma2) > 5.0 * sigma2 * sqrt(2.0 / (double)draws) + 1e-9)
    fail_msg("Binomial(%llu, %g): variance %g, want %g", (unsigned long long)n, p, var, sigma2);
  if (obs) {
    double chi = 0.0, pooled_e = 0.0, pooled_o = 0.0;
    int df = -1;
    for (size_t k = 0; k <= n; k++) {
      double lp = lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
                  (double)k * log(p) + (double)(n - k) * log1p(-p);
      double e = (double)draws * exp(lp);
      if (e >= 5.0) {
        chi += (obs[k] - e) * (obs[k] - e) / e;
        df++;
      } else {
        pooled_e += e;
        pooled_o += obs[k];
      }
    }
    if (pooled_e >= 5.0) {
      chi += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
      df++;
    }
    if (!(chi < df + 6.0 * sqrt(2.0 * df)))
      fail_msg("Binomial(%llu, %g): chi-square %g with %d df", (unsigned long long)n, p, chi, df);
    free(obs);
  }
}

static void test_binomial_draws(void **state) {
  (void)state;
  check_binomial(5, 0.3, 200000, 1);      /* inversion */
  check_binomial(1000, 0.003, 200000, 1); /* inversion, small mean */
  check_binomial(40, 0.3, 200000, 1);     /* BTRD, recurrence branch */
  check_binomial(1000, 0.3, 200000, 1);   /* BTRD, squeeze and exact test */
  check_binomial(60, 0.85, 200000, 1);    /* symmetry */
  check_binomial(1000000000ULL, 0.2, 100000, 0);
  cb_rng rng;
  cb_rng_init(&rng, 1);
  assert_true(cb__stats_binomial(&rng, 0, 0.5) == 0);
  assert_true(cb__stats_binomial(&rng, 7, 0.0) == 0);
  assert_true(cb__stats_binomial(&rng, 7, 1.0) == 7);
  /* multinomial: counts sum to n, empty categories stay empty, means follow the shares */
  const double shares[] = {4, 0, 3, 2, 1, 0};
  double c[6], tot[6] = {0};
  for (int r = 0; r < 20000; r++) {
    cb__stats_multinomial(&rng, 1000, shares, 6, c);
    double s = 0;
    for (int i = 0; i < 6; i++) s += c[i], tot[i] += c[i];
    assert_true(s == 1000 && c[1] == 0 && c[5] == 0);
  }
  for (int i = 0; i < 6; i++) {
    double want = 1000.0 * shares[i] / 10.0 * 20000, sd = sqrt(want * (1 - shares[i] / 10.0));
    if (fabs(tot[i] - want) > 5 * sd + 1e-9) fail_msg("category %d: %g, want %g", i, tot[i], want);
  }
}

/* Upper alpha = 1e-6 quantile of chi-square with df degrees of freedom, by Wilson and
 * Hilferty's cube-root normal approximation (Biometrika 1931; z = 4.7534 is the normal's
 * 1 - 1e-6 quantile): a correct sampler fails one run in a million. */
static double chi2_crit_1e6(int df) {
  double h = 2.0 / (9.0 * df);
  return df * pow(1.0 - h + 4.7534 * sqrt(h), 3.0);
}

/* The joint law of Multinomial(n, shares) over k = 3 categories, cell by cell, against
 * the exact pmf n! / (a! b! c!) p0^a p1^b p2^c: chi-square over cells with an expected
 * count >= 5 (the rest pooled) below the alpha = 1e-6 critical value. */
static void check_multinomial_joint(uint64_t n, const double shares[3], size_t draws) {
  size_t side = (size_t)n + 1;
  double *obs = calloc(side * side, sizeof *obs), c[3];
  cb_rng rng;
  cb_rng_init(&rng, 99 + n);
  cb__stats_multinomial_sampler smp;
  cb__stats_multinomial_init(&smp, n, shares, 3);
  for (size_t d = 0; d < draws; d++) {
    cb__stats_multinomial_draw(&smp, &rng, c);
    assert_true(c[0] + c[1] + c[2] == (double)n);
    for (int i = 0; i < 3; i++)
      if (shares[i] == 0.0) assert_true(c[i] == 0.0); /* a category without weight stays empty */
    obs[(size_t)c[0] * side + (size_t)c[1]] += 1.0;
  }
  cb__stats_multinomial_free(&smp);
  double tot = shares[0] + shares[1] + shares[2], lp[3];
  for (int i = 0; i < 3; i++) lp[i] = shares[i] > 0 ? log(shares[i] / tot) : -INFINITY;
  double chi = 0.0, pooled_e = 0.0, pooled_o = 0.0;
  int df = -1;
  for (uint64_t a = 0; a <= n; a++)
    for (uint64_t b = 0; a + b <= n; b++) {
      uint64_t z = n - a - b;
      double l = lgamma((double)n + 1) - lgamma((double)a + 1) - lgamma((double)b + 1) -
                 lgamma((double)z + 1);
      l += (a ? (double)a * lp[0] : 0) + (b ? (double)b * lp[1] : 0) + (z ? (double)z * lp[2] : 0);
      double e = (double)draws * exp(l), o = obs[a * side + b];
      if (e >= 5.0) {
        chi += (o - e) * (o - e) / e;
        df++;
      } else {
        pooled_e += e;
        pooled_o += o;
      }
    }
  if (pooled_e >= 5.0) {
    chi += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
    df++;
  } else if (pooled_o > 10.0 + 10.0 * pooled_e) {
    fail_msg("Multinomial(%llu): %g draws in cells expected to hold %g",
             (unsigned long long)n, pooled_o, pooled_e);
  }
  assert_true(df > 0);
  if (!(chi < chi2_crit_1e6(df)))
    fail_msg("Multinomial(%llu, {%g, %g, %g}): chi-square %g with %d df (critical %g)",
             (unsigned long long)n, shares[0], shares[1], shares[2], chi, df, chi2_crit_1e6(df));
  free(obs);
}

static void test_multinomial_joint(void **state) {
  (void)state;
  const double skew[3] = {0.7, 0.2, 0.1}, even[3] = {1, 1, 1}, holed[3] = {3, 0, 1};
  /* the alias table (n <= 8 x categories with weight) */
  check_multinomial_joint(6, skew, 200000);
  check_multinomial_joint(24, even, 200000);
  check_multinomial_joint(16, holed, 100000);
  /* conditional binomials (inversion and BTRD) */
  check_multinomial_joint(25, skew, 200000);
  check_multinomial_joint(120, even, 200000);
  check_multinomial_joint(200, holed, 100000);
  /* which way each case took */
  cb__stats_multinomial_sampler smp;
  cb__stats_multinomial_init(&smp, 16, holed, 3);
  assert_non_null(smp.table);
  cb__stats_multinomial_free(&smp);
  cb__stats_multinomial_init(&smp, 25, skew, 3);
  assert_null(smp.table);
  cb__stats_multinomial_free(&smp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scipy_vectors),  cmocka_unit_test(test_known_values),
      cmocka_unit_test(test_invalid_inputs), cmocka_unit_test(test_smoothing),
      cmocka_unit_test(test_binning),        cmocka_unit_test(test_bootstrap),
      cmocka_unit_test(test_binomial_draws), cmocka_unit_test(test_multinomial_joint),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
